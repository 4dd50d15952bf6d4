// `N` over `Arguments::MAX_CAPACITY` is a build error: the list (and the `Value`s the checked
// call path builds from it on the stack) would be out of proportion to any descriptor.
use gatun::Arguments;

fn main() {
    let args = Arguments::<100_000>::new();
    assert!(args.is_empty());
}
