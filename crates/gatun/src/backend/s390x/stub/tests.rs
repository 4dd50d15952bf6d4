//! Code-shape tests of the s390x stub compiler.
