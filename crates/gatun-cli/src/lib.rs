//! The library half of the `gatun` command line: the `call` and `layout` subcommands, whose
//! parsing and rendering the binary runs and the fuzz targets (`crates/gatun-fuzz`) exercise
//! without calling anything.
//!
//! - [`call_cmd`]: `gatun call` — [`call_cmd::parse_prototype`] (the declaration, and the
//!   headers given with `-i`, which run the system C compiler),
//!   [`call_cmd::prepare_call`] (argument words to values and segments), [`call_cmd::run`]
//!   (link, call, print), [`call_cmd::hoist_options`] (the command line's option order).
//! - [`layout_cmd`]: `gatun layout` — [`layout_cmd::render`] (the table or JSON as text) and
//!   [`layout_cmd::run`] (print it).
//!
//! ```
//! use gatun_cli::layout_cmd::{render, LayoutArgs};
//! let args = LayoutArgs {
//!     decl: "struct S { char c; double d; }".into(),
//!     json: false,
//!     includes: Vec::new(),
//! };
//! let text = render(&args).unwrap();
//! assert!(text.starts_with("struct S: size 16, alignment 8\n"));
//! ```

pub mod call_cmd;
pub mod layout_cmd;
