// `N` equal to `Arguments::MAX_CAPACITY` builds (and the list works).
use gatun::Arguments;

fn main() {
    let mut args = Arguments::<512>::new();
    args.i32(1);
    assert_eq!((args.len(), args.capacity()), (1, 512));
    let empty: Arguments<'_, 512> = Default::default();
    assert!(empty.is_empty());
}
