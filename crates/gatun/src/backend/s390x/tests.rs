//! The s390x executor against C code compiled by gcc.
