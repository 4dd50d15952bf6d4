//! The library half of the `gatun` command line: the `call` and `layout` subcommands, whose
//! parsing and rendering the binary runs and the fuzz targets (`crates/gatun-fuzz`) exercise
//! without calling anything.
//!
//! - [`call`]: `gatun call` — [`call::parse_prototype`] (the declaration, and the
//!   headers given with `-i`, which run the system C compiler),
//!   [`call::prepare_call`] (argument words to values and segments), [`call::run`]
//!   (link, call, print), [`call::hoist_options`] (the command line's option order);
//!   its errors are [`call::CallError`].
//! - [`layout_cmd`]: `gatun layout` — [`layout_cmd::render`] (the table or JSON as text) and
//!   [`layout_cmd::run`] (print it); its errors are [`layout_cmd::LayoutError`].
//! - [`headers`]: the headers given with `-i` and the preprocessor's options for them (`-D`,
//!   `-I`, `-include`), shared by both.
//!
//! ```
//! use gatun_cli::headers::HeaderArgs;
//! use gatun_cli::layout_cmd::{render, LayoutArgs};
//! let args = LayoutArgs {
//!     decl: "struct S { char c; double d; }".into(),
//!     json: false,
//!     headers: HeaderArgs::default(),
//! };
//! let text = render(&args).unwrap();
//! assert!(text.starts_with("struct S: size 16, alignment 8\n"));
//! ```

pub mod call;
pub mod headers;
pub mod layout_cmd;
