//! AArch64 plan unit tests: one per AAPCS64 rule, plans asserted directly.

use super::*;
