//! Prints the layout-tree description a `layout` fuzz input stands for:
//! `cargo run -p gatun-fuzz --example describe_layout_input -- FILE`.

fn main() {
    let path = std::env::args_os()
        .nth(1)
        .expect("usage: describe_layout_input FILE");
    let data = std::fs::read(&path).expect("reading the input");
    match gatun_fuzz::describe_layout_input(&data) {
        Some(text) => println!("{text}"),
        None => println!("(describes nothing)"),
    }
}
