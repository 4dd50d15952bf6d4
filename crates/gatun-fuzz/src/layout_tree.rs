//! [`check_layout`]: bytes as an `arbitrary` description of a layout tree.

use arbitrary::{Arbitrary, Unstructured};
use gatun::abi::sysv as sysv_x64;
use gatun::layout::{MemoryLayout, PathElement, ScalarKind, ValueLayout};
use gatun::memory::{Arena, SegmentAllocator};
use gatun::{FunctionDescriptor, Linker, LinkerOption, Value};

use crate::checks;
use crate::noop::noop_symbol;

/// Steps of a description that are carried out, at most.
const MAX_STEPS: usize = 512;
/// Members of one struct or union, at most.
const MAX_MEMBERS: usize = 64;
/// Layout constructor calls per input, at most (deep nesting and sharing included).
const MAX_CONSTRUCTIONS: usize = 100_000;
/// The results of this many last steps are examined (formatted, hashed, classified, ...);
/// each examination costs time in proportion to the layout.
const MAX_EXAMINED: usize = 32;
/// Calls (descriptors planned and linked) per input, at most.
const MAX_CALLS: usize = 8;
/// Arguments of one descriptor, at most.
const MAX_ARGS: usize = 16;
/// Paths selected per input, at most, and their length.
const MAX_PATHS: usize = 16;
const MAX_PATH_LEN: usize = 16;
/// Layouts up to this size (bytes) are allocated and read at their selected paths.
const MAX_ALLOCATED: usize = 64 * 1024;

/// Whether `layout` is small enough to allocate (see [`MAX_ALLOCATED`]).
fn allocatable(layout: &MemoryLayout) -> bool {
    layout.byte_size() <= MAX_ALLOCATED
}

/// A reference to an earlier result: 0 is the latest, counting back (modulo the count).
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Ref(u16);

/// A count or size, biased towards the interesting ones.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Count {
    Zero,
    Small(u8),
    Pow2(u8),
    Max,
    NearMax(u8),
    NearIsizeMax(u16),
    Any(u64),
}

impl Count {
    fn value(self) -> usize {
        match self {
            Count::Zero => 0,
            Count::Small(n) => usize::from(n),
            Count::Pow2(n) => 1usize << (u32::from(n) % usize::BITS),
            Count::Max => usize::MAX,
            Count::NearMax(k) => usize::MAX - usize::from(k),
            Count::NearIsizeMax(k) => isize::MAX as usize - usize::from(k),
            Count::Any(n) => n as usize,
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
enum Name {
    /// `m0`..`m7`: names that paths are likely to hit.
    Short(u8),
    Text(String),
}

impl Name {
    fn text(&self) -> String {
        match self {
            Name::Short(n) => format!("m{}", n % 8),
            Name::Text(s) => s.chars().take(32).collect(),
        }
    }
}

/// How one level of nesting or sharing wraps the layout below it.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Wrap {
    Struct,
    Union,
    Packed,
    Array(u8),
    Pointer,
}

#[derive(Arbitrary, Debug)]
enum Step {
    Scalar(u8),
    Pointer(Ref),
    Struct(Vec<Ref>),
    StructPacked(Vec<Ref>, u8),
    ExplicitStruct(Vec<Ref>),
    Union(Vec<Ref>),
    UnionPacked(Vec<Ref>, u8),
    Sequence(Count, Ref),
    Padding(Count),
    Named(Ref, Name),
    Aligned(Ref, u8),
    AlignedRaw(Ref, Count),
    /// `depth` levels of one-member wrapping (deep trees from a few input bytes).
    Nest {
        of: Ref,
        depth: u16,
        wrap: Wrap,
    },
    /// `levels` levels of `width` copies of the level below (a tree of exponentially many
    /// paths over a few shared nodes).
    Share {
        of: Ref,
        levels: u8,
        width: u8,
        wrap: Wrap,
    },
}

#[derive(Arbitrary, Debug)]
struct Call {
    ret: Option<Ref>,
    args: Vec<Ref>,
    variadic: Option<u8>,
    capture: bool,
    critical: bool,
    duplicate_option: bool,
    upcall: bool,
}

#[derive(Arbitrary, Debug)]
enum Step2 {
    Name(Name),
    Index(Count),
}

#[derive(Arbitrary, Debug)]
struct PathSpec {
    of: Ref,
    steps: Vec<Step2>,
}

#[derive(Arbitrary, Debug)]
struct Tree {
    steps: Vec<Step>,
    calls: Vec<Call>,
    paths: Vec<PathSpec>,
}

/// The layouts built so far, and the construction budget.
struct Builder {
    results: Vec<MemoryLayout>,
    constructions: usize,
    input_len: usize,
}

impl Builder {
    fn get(&self, r: Ref) -> MemoryLayout {
        match self.results.len() {
            0 => ValueLayout::I32.into(),
            n => self.results[n - 1 - usize::from(r.0) % n].clone(),
        }
    }

    fn members(&self, refs: &[Ref]) -> Vec<MemoryLayout> {
        refs.iter()
            .take(MAX_MEMBERS)
            .map(|&r| self.get(r))
            .collect()
    }

    /// Spends one construction; `false` when the budget is used up.
    fn spend(&mut self, n: usize) -> bool {
        if self.constructions + n > MAX_CONSTRUCTIONS {
            return false;
        }
        self.constructions += n;
        true
    }

    /// A constructor's result: the layout, or its error checked for a bounded message.
    fn ok(&self, r: gatun::Result<MemoryLayout>) -> Option<MemoryLayout> {
        match r {
            Ok(l) => Some(l),
            Err(e) => {
                checks::bounded_message("layout error", &e.to_string(), self.input_len);
                None
            }
        }
    }

    fn wrap(&self, wrap: Wrap, members: Vec<MemoryLayout>) -> Option<MemoryLayout> {
        let r = match wrap {
            Wrap::Struct => MemoryLayout::c_struct(members),
            Wrap::Union => MemoryLayout::union_layout(members),
            Wrap::Packed => MemoryLayout::c_struct_packed(members, 1),
            Wrap::Array(n) => {
                let count = usize::from(n % 4);
                match members.len() {
                    1 => MemoryLayout::sequence_layout(count, members.into_iter().next()?),
                    _ => MemoryLayout::c_struct(
                        members
                            .into_iter()
                            .map(|m| MemoryLayout::sequence_layout(count, m))
                            .collect::<gatun::Result<Vec<_>>>()
                            .ok()?,
                    ),
                }
            }
            Wrap::Pointer => {
                let pointers = members
                    .into_iter()
                    // SAFETY: the fuzz checks read pointers only from zeroed segments, and a
                    // null pointer is what every target allows.
                    .map(|m| unsafe { ValueLayout::pointer_to(m) }.map(MemoryLayout::from))
                    .collect::<gatun::Result<Vec<_>>>();
                match pointers {
                    Ok(p) => MemoryLayout::c_struct(p),
                    Err(e) => Err(e),
                }
            }
        };
        self.ok(r)
    }

    fn step(&mut self, step: &Step) -> Option<MemoryLayout> {
        if !self.spend(1) {
            return None;
        }
        let pack = |n: u8| 1usize << (n % 5);
        match step {
            Step::Scalar(k) => Some(ValueLayout::new(ScalarKind::ALL[usize::from(*k) % 12]).into()),
            Step::Pointer(r) => {
                // SAFETY: as in `wrap`: only null pointers are read through these layouts.
                let pointer = unsafe { ValueLayout::pointer_to(self.get(*r)) };
                self.ok(pointer.map(Into::into))
            }
            Step::Struct(m) => self.ok(MemoryLayout::c_struct(self.members(m))),
            Step::StructPacked(m, p) => {
                self.ok(MemoryLayout::c_struct_packed(self.members(m), pack(*p)))
            }
            Step::ExplicitStruct(m) => self.ok(MemoryLayout::struct_layout(self.members(m))),
            Step::Union(m) => self.ok(MemoryLayout::union_layout(self.members(m))),
            Step::UnionPacked(m, p) => {
                self.ok(MemoryLayout::union_layout_packed(self.members(m), pack(*p)))
            }
            Step::Sequence(c, r) => self.ok(MemoryLayout::sequence_layout(c.value(), self.get(*r))),
            Step::Padding(c) => self.ok(MemoryLayout::padding_layout(c.value())),
            Step::Named(r, n) => Some(self.get(*r).with_name(n.text())),
            Step::Aligned(r, a) => self.ok(self
                .get(*r)
                .with_byte_alignment(1usize << (u32::from(*a) % usize::BITS))),
            Step::AlignedRaw(r, a) => self.ok(self.get(*r).with_byte_alignment(a.value())),
            Step::Nest { of, depth, wrap } => {
                let mut current = self.get(*of);
                for _ in 0..*depth {
                    if !self.spend(1) {
                        break;
                    }
                    match self.wrap(*wrap, vec![current.clone()]) {
                        Some(next) => current = next,
                        None => break,
                    }
                }
                Some(current)
            }
            Step::Share {
                of,
                levels,
                width,
                wrap,
            } => {
                let width = 2 + usize::from(width % 3);
                let mut current = self.get(*of);
                for _ in 0..(levels % 64) {
                    if !self.spend(width) {
                        break;
                    }
                    match self.wrap(*wrap, vec![current.clone(); width]) {
                        Some(next) => current = next,
                        None => break,
                    }
                }
                Some(current)
            }
        }
    }
}

/// Builds the layouts an [`arbitrary`] description in `data` gives (at most
/// [`crate::MAX_INPUT_BYTES`] bytes; steps, members, nesting levels and constructor calls are
/// capped), through the public constructors: scalars, pointers with targets, C, packed and
/// explicit structs, unions, sequences with zero, small, huge and near-`usize::MAX` counts,
/// padding, names, alignments (valid and invalid), deep nesting, and sharing (levels of several
/// copies of the level below). Then, for the last results:
///
/// - shape (members within the size, powers of two), format, hash, compare (with a clone and
///   with the previous result), classify (SysV x86-64);
/// - select the described paths (an offset plus the selected size stays within the layout),
///   and for layouts up to 64 KiB allocate a segment and read/write the selected scalars;
/// - for the described calls: format the descriptor, plan it, link it as a downcall to a no-op
///   function with the described options (the handle is never called) and, when asked, make an
///   upcall stub for it (its closure is never called).
///
/// Every error message is bounded by [`crate::message_limit`].
///
/// # Panics
/// When an invariant above does not hold (the fuzzer's crash).
pub fn check_layout(data: &[u8]) {
    if data.len() > crate::MAX_INPUT_BYTES {
        return;
    }
    let Ok(tree) = Tree::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let mut b = Builder {
        results: Vec::new(),
        constructions: 0,
        input_len: data.len(),
    };
    for step in tree.steps.iter().take(MAX_STEPS) {
        if let Some(l) = b.step(step) {
            b.results.push(l);
        }
    }
    let first_examined = b.results.len().saturating_sub(MAX_EXAMINED);
    let mut previous: Option<&MemoryLayout> = None;
    for layout in &b.results[first_examined..] {
        examine(layout, data.len());
        if let Some(p) = previous {
            if p == layout {
                assert_eq!(
                    checks::layout_identity(p),
                    checks::layout_identity(layout),
                    "equal layouts format differently"
                );
            }
        }
        previous = Some(layout);
    }
    for path in tree.paths.iter().take(MAX_PATHS) {
        select(&b.get(path.of), &path.steps);
    }
    for call in tree.calls.iter().take(MAX_CALLS) {
        link(&b, call, data.len());
    }
}

/// The description [`check_layout`] reads from `data`, as Rust debug text (for triaging a
/// crash input), or `None` if `data` describes nothing.
pub fn describe_layout_input(data: &[u8]) -> Option<String> {
    Tree::arbitrary_take_rest(Unstructured::new(data))
        .ok()
        .map(|t| format!("{t:#?}"))
}

fn examine(layout: &MemoryLayout, input_len: usize) {
    checks::layout_shape(layout);
    checks::layout_identity(layout);
    checks::classification(layout);
    if allocatable(layout) {
        let arena = Arena::confined();
        match arena.allocate_layout(layout) {
            Ok(seg) => assert_eq!(seg.byte_size(), layout.byte_size(), "segment size"),
            Err(e) => checks::bounded_message("allocation error", &e.to_string(), input_len),
        }
    }
}

fn select(layout: &MemoryLayout, steps: &[Step2]) {
    let names: Vec<String> = steps
        .iter()
        .map(|s| match s {
            Step2::Name(n) => n.text(),
            Step2::Index(_) => String::new(),
        })
        .collect();
    let path: Vec<PathElement<'_>> = steps
        .iter()
        .zip(&names)
        .take(MAX_PATH_LEN)
        .map(|(s, n)| match s {
            Step2::Name(_) => PathElement::Name(n),
            Step2::Index(c) => PathElement::Index(c.value() % 64),
        })
        .collect();
    let Ok((offset, selected)) = layout.select(path.iter().copied()) else {
        return;
    };
    let end = offset.checked_add(selected.byte_size());
    assert!(
        end.is_some_and(|e| e <= layout.byte_size()),
        "path selects {} bytes at offset {offset} of a {}-byte layout",
        selected.byte_size(),
        layout.byte_size()
    );
    assert_eq!(
        layout.byte_offset(path.iter().copied()).ok(),
        Some(offset),
        "byte_offset"
    );
    let Some(v) = selected.as_value() else {
        return;
    };
    if !allocatable(layout) {
        return;
    }
    let arena = Arena::confined();
    let Ok(seg) = arena.allocate_layout(layout) else {
        return;
    };
    match seg.get_value(v, offset) {
        Ok(value) => {
            seg.set_value(v, offset, &value)
                .expect("writing back the value just read");
            assert_eq!(
                seg.get_value(v, offset).ok(),
                Some(value),
                "read after write"
            );
        }
        Err(gatun::Error::OutOfBounds { .. }) => {
            panic!("a selected scalar at offset {offset} is out of bounds")
        }
        Err(_) => {}
    }
}

/// The plan of the ABI that `Linker::native()` links with on this host (the SysV plan is
/// checked on every host; a handle holds its own ABI's plan).
fn native_plan(
    descriptor: &FunctionDescriptor,
    first_variadic: Option<usize>,
) -> gatun::Result<gatun::abi::CallPlan> {
    let abi = gatun::abi::Abi::host().expect("a downcall linked, so gatun executes on this host");
    gatun::abi::plan_for(abi, descriptor, first_variadic)
}

fn link(b: &Builder, call: &Call, input_len: usize) {
    let args: Vec<MemoryLayout> = call.args.iter().take(MAX_ARGS).map(|&r| b.get(r)).collect();
    let n = args.len();
    let descriptor = match call.ret {
        Some(r) => FunctionDescriptor::of(b.get(r), args),
        None => FunctionDescriptor::of_void(args),
    };
    let text = descriptor.to_string();
    assert!(!text.is_empty(), "a descriptor formats as the empty string");
    let first_variadic = call.variadic.map(|v| usize::from(v) % (n + 2));
    let plan = sysv_x64::plan(&descriptor, first_variadic);
    match &plan {
        Ok(p) => checks::call_plan(p, &descriptor, first_variadic),
        Err(e) => checks::bounded_message("plan error", &e.to_string(), input_len),
    }
    let mut options = Vec::new();
    if let Some(i) = first_variadic {
        options.push(LinkerOption::FirstVariadicArg(i));
    }
    if call.capture {
        options.push(LinkerOption::CaptureCallState(&["errno"]));
    }
    if call.critical {
        options.push(LinkerOption::Critical);
    }
    if call.duplicate_option {
        if let Some(o) = options.first().cloned() {
            options.push(o);
        }
    }
    match Linker::native().downcall(&noop_symbol(), &descriptor, &options) {
        Ok(handle) => {
            let plan = native_plan(&descriptor, first_variadic);
            assert!(
                plan.is_ok(),
                "linked a descriptor that does not plan: {text}"
            );
            assert!(
                handle.descriptor() == &descriptor,
                "the handle's descriptor"
            );
            assert!(Ok(handle.plan()) == plan.as_ref(), "the handle's plan");
        }
        Err(e) => checks::bounded_message("downcall error", &e.to_string(), input_len),
    }
    if call.upcall {
        let arena = Arena::confined();
        match Linker::native().upcall_stub(&descriptor, |_| Ok(Value::Void), &arena) {
            Ok(stub) => {
                assert!(!stub.address().is_null(), "an upcall stub at address 0");
                assert!(stub.descriptor() == &descriptor, "the stub's descriptor");
            }
            Err(e) => checks::bounded_message("upcall error", &e.to_string(), input_len),
        };
    }
}
