// `N` equal to `Arguments::MAX_CAPACITY` builds (and the list works).
use gatun::Arguments;

fn main() {
    let mut args = Arguments::<1024>::new();
    args.i32(1);
    assert_eq!((args.len(), args.capacity()), (1, 1024));
    let empty: Arguments<'_, 1024> = Default::default();
    assert!(empty.is_empty());
}
