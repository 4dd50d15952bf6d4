// `Default` checks the same bound as `Arguments::new`.
use gatun::Arguments;

fn main() {
    let args: Arguments<'_, 1025> = Default::default();
    assert!(args.is_empty());
}
