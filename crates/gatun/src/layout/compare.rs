//! Structural comparison of layouts: `==` (everything), [`same_declaration`] (pointer targets
//! ignored) and [`same_shape`] (names and pointer targets ignored), all linear in the size of
//! the two layouts however their members are shared.
//!
//! A layout is a DAG: member lists, sequence elements, pointer targets, offset lists and names
//! sit behind `Arc`s and may be shared any number of times. Its *size* here is the number of
//! distinct member lists' slots plus the lengths of its distinct offset lists and names; the
//! tree expansion may be exponentially larger. One mechanism serves both kinds of comparison,
//! parameterised by [`Compare`]:
//!
//! 1. A lockstep walk of the two layouts ([`direct`]) that compares cheap fields first
//!    (kind, size, alignment, member counts, and under [`Compare::Exact`] the cached [`Shape`]:
//!    depth, member alignment and structural hash), short-circuits on shared `Arc`s and stops at
//!    the first difference. It allocates nothing and may take at most [`DIRECT_STEPS`] steps
//!    (one per pair of nodes, one per offset compared): small layouts, the usual case, are
//!    decided here.
//! 2. When the budget runs out, an [`Interner`] numbers both layouts bottom-up by content
//!    (hash-consing): each distinct `Arc` (member list, offset list, name, element, target) is
//!    numbered once, remembered by address, and each node gets the number of its content key
//!    (its own fields and its parts' numbers). Two layouts are equal iff their roots get the
//!    same number. Work: O(size of both layouts) hash-map operations, whatever the sharing, and
//!    whether the layouts are equal or not.
//!
//! A walk that memoizes *pairs* of nodes instead is not linear: a pair is visited once, but
//! when both sides share differently (n distinct copies of a member on one side against n
//! distinct copies on the other, reached through differently shared parents) there are n²
//! pairs of n-member lists for layouts of size O(n²).
//!
//! Recursion is at most [`super::MAX_NESTING`] levels deep (every constructor bounds it).

use std::collections::HashMap;
use std::sync::Arc;

use super::structure::Shape;
use super::{
    MemoryLayout, PaddingLayout, PointerTarget, ScalarKind, SequenceLayout, StructLayout,
    UnionLayout, ValueLayout,
};

/// What a comparison looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compare {
    /// Everything: kinds, sizes, alignments, offsets, counts, names and pointer targets (`==`).
    Exact,
    /// What a C declaration says without the trusted pointer targets: everything but pointer
    /// targets (a record declared twice, once before and once after a pointee is complete).
    Declaration,
    /// What the C ABI sees: kinds, sizes, alignments, offsets and counts; names and pointer
    /// targets are ignored.
    Shape,
}

/// Steps the allocation-free walk may take before the comparison switches to numbering.
const DIRECT_STEPS: usize = 256;

#[cfg(test)]
thread_local! {
    /// Comparison steps taken on this thread: node pairs and offsets compared by the walk, nodes,
    /// offsets and names numbered by the interner (tests bound the work by it).
    pub(crate) static STEPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[inline]
fn step(_n: usize) {
    #[cfg(test)]
    STEPS.with(|s| s.set(s.get() + _n));
}

/// Takes `n` steps from `budget`; `None` when fewer are left.
#[inline]
fn spend(budget: &mut usize, n: usize) -> Option<()> {
    *budget = budget.checked_sub(n)?;
    step(n);
    Some(())
}

/// Shape-only equality of layouts: kinds, sizes, alignments, offsets and counts; names and
/// pointer targets are ignored (what a `#[repr(C)]` type must match). Linear in the size of the
/// two layouts (see the module documentation).
pub(crate) fn same_shape(a: &MemoryLayout, b: &MemoryLayout) -> bool {
    equal(a, b, Compare::Shape, direct, Interner::node)
}

/// Equality of layouts except for pointer targets: kinds, sizes, alignments, offsets, counts and
/// names. Linear in the size of the two layouts (see the module documentation).
pub(crate) fn same_declaration(a: &MemoryLayout, b: &MemoryLayout) -> bool {
    equal(a, b, Compare::Declaration, direct, Interner::node)
}

/// Compares `a` and `b`: the walk first, numbering when its budget runs out.
fn equal<'a, T: ?Sized>(
    a: &'a T,
    b: &'a T,
    mode: Compare,
    walk: fn(&T, &T, Compare, &mut usize) -> Option<bool>,
    number: fn(&mut Interner<'a>, &'a T) -> usize,
) -> bool {
    let mut budget = DIRECT_STEPS;
    match walk(a, b, mode, &mut budget) {
        Some(equal) => equal,
        None => {
            let mut interner = Interner::new(mode);
            number(&mut interner, a) == number(&mut interner, b)
        }
    }
}

fn names_eq(a: Option<&str>, b: Option<&str>, mode: Compare) -> bool {
    mode == Compare::Shape || a == b
}

/// The cached shapes agree (only under [`Compare::Exact`]: the shape hashes names and targets,
/// and its depth counts targets).
fn shapes_eq(a: &Shape, b: &Shape, mode: Compare) -> bool {
    mode != Compare::Exact || a == b
}

/// The allocation-free walk: `Some(equal)`, or `None` when `budget` ran out first.
fn direct(a: &MemoryLayout, b: &MemoryLayout, mode: Compare, budget: &mut usize) -> Option<bool> {
    match (a, b) {
        (MemoryLayout::Value(x), MemoryLayout::Value(y)) => direct_value(x, y, mode, budget),
        (MemoryLayout::Struct(x), MemoryLayout::Struct(y)) => direct_struct(x, y, mode, budget),
        (MemoryLayout::Union(x), MemoryLayout::Union(y)) => direct_union(x, y, mode, budget),
        (MemoryLayout::Sequence(x), MemoryLayout::Sequence(y)) => {
            direct_sequence(x, y, mode, budget)
        }
        (MemoryLayout::Padding(x), MemoryLayout::Padding(y)) => {
            spend(budget, 1)?;
            Some(padding_eq(x, y, mode))
        }
        _ => Some(false),
    }
}

fn padding_eq(a: &PaddingLayout, b: &PaddingLayout, mode: Compare) -> bool {
    a.byte_size == b.byte_size && names_eq(a.name(), b.name(), mode)
}

fn direct_value(
    a: &ValueLayout,
    b: &ValueLayout,
    mode: Compare,
    budget: &mut usize,
) -> Option<bool> {
    spend(budget, 1)?;
    if a.kind() != b.kind()
        || a.byte_alignment() != b.byte_alignment()
        || !names_eq(a.name(), b.name(), mode)
    {
        return Some(false);
    }
    if mode != Compare::Exact {
        return Some(true);
    }
    match (a.target_arc(), b.target_arc()) {
        (None, None) => Some(true),
        (Some(x), Some(y)) if Arc::ptr_eq(x, y) => Some(true),
        (Some(x), Some(y)) => match (&**x, &**y) {
            (PointerTarget::Layout(x), PointerTarget::Layout(y)) => direct(x, y, mode, budget),
            (x, y) => Some(x == y),
        },
        _ => Some(false),
    }
}

fn direct_members(
    a: &Arc<[MemoryLayout]>,
    b: &Arc<[MemoryLayout]>,
    mode: Compare,
    budget: &mut usize,
) -> Option<bool> {
    if Arc::ptr_eq(a, b) {
        return Some(true);
    }
    for (x, y) in a.iter().zip(b.iter()) {
        if !direct(x, y, mode, budget)? {
            return Some(false);
        }
    }
    Some(a.len() == b.len())
}

fn direct_struct(
    a: &StructLayout,
    b: &StructLayout,
    mode: Compare,
    budget: &mut usize,
) -> Option<bool> {
    spend(budget, 1)?;
    if !(shapes_eq(&a.shape, &b.shape, mode)
        && a.byte_size == b.byte_size
        && a.byte_alignment == b.byte_alignment
        && a.members.len() == b.members.len()
        && names_eq(a.name(), b.name(), mode))
    {
        return Some(false);
    }
    if !Arc::ptr_eq(&a.offsets, &b.offsets) {
        spend(budget, a.offsets.len())?;
        if a.offsets != b.offsets {
            return Some(false);
        }
    }
    direct_members(&a.members, &b.members, mode, budget)
}

fn direct_union(
    a: &UnionLayout,
    b: &UnionLayout,
    mode: Compare,
    budget: &mut usize,
) -> Option<bool> {
    spend(budget, 1)?;
    if !(shapes_eq(&a.shape, &b.shape, mode)
        && a.byte_size == b.byte_size
        && a.byte_alignment == b.byte_alignment
        && a.members.len() == b.members.len()
        && names_eq(a.name(), b.name(), mode))
    {
        return Some(false);
    }
    direct_members(&a.members, &b.members, mode, budget)
}

fn direct_sequence(
    a: &SequenceLayout,
    b: &SequenceLayout,
    mode: Compare,
    budget: &mut usize,
) -> Option<bool> {
    spend(budget, 1)?;
    if !(shapes_eq(&a.shape, &b.shape, mode)
        && a.count == b.count
        && a.byte_alignment == b.byte_alignment
        && names_eq(a.name(), b.name(), mode))
    {
        return Some(false);
    }
    if Arc::ptr_eq(&a.element, &b.element) {
        return Some(true);
    }
    direct(&a.element, &b.element, mode, budget)
}

/// The content of a node or part, with its parts replaced by their numbers (0: none).
#[derive(PartialEq, Eq, Hash)]
enum Key<'a> {
    Value {
        kind: ScalarKind,
        align: usize,
        name: usize,
        target: usize,
    },
    /// A [`PointerTarget::CString`] target.
    CString,
    /// A [`PointerTarget::Enclosing`] target, by the number of its name.
    Enclosing(usize),
    Struct {
        size: usize,
        align: usize,
        name: usize,
        members: usize,
        offsets: usize,
    },
    Union {
        size: usize,
        align: usize,
        name: usize,
        members: usize,
    },
    Sequence {
        count: usize,
        align: usize,
        name: usize,
        element: usize,
    },
    Padding {
        size: usize,
        name: usize,
    },
    Members(Box<[usize]>),
    Offsets(&'a [usize]),
    Name(&'a str),
}

/// Where a shared part lives: its address (and length, for slices). The same address and
/// length during one comparison (all parts are borrowed, so none is freed or mutated) means
/// the same content, so a part found there again has the number already given.
#[derive(PartialEq, Eq, Hash)]
enum Place {
    Members(usize, usize),
    Offsets(usize, usize),
    Name(usize, usize),
    Node(usize),
}

/// Numbers layouts by content (hash-consing), each distinct part once.
struct Interner<'a> {
    mode: Compare,
    /// Numbers of parts already seen, by address.
    seen: HashMap<Place, usize>,
    /// Numbers by content; numbers start at 1.
    numbers: HashMap<Key<'a>, usize>,
}

impl<'a> Interner<'a> {
    fn new(mode: Compare) -> Self {
        Interner {
            mode,
            seen: HashMap::new(),
            numbers: HashMap::new(),
        }
    }

    fn number(&mut self, key: Key<'a>) -> usize {
        let next = self.numbers.len() + 1;
        *self.numbers.entry(key).or_insert(next)
    }

    /// The number of the part at `place`, computed by `content` the first time.
    fn shared(&mut self, place: Place, content: impl FnOnce(&mut Self) -> Key<'a>) -> usize {
        if let Some(&n) = self.seen.get(&place) {
            return n;
        }
        let key = content(self);
        let n = self.number(key);
        self.seen.insert(place, n);
        n
    }

    fn name(&mut self, name: Option<&'a str>) -> usize {
        match (self.mode, name) {
            (Compare::Shape, _) | (_, None) => 0,
            (Compare::Exact | Compare::Declaration, Some(s)) => {
                step(1);
                self.shared(Place::Name(s.as_ptr() as usize, s.len()), |_| {
                    step(s.len());
                    Key::Name(s)
                })
            }
        }
    }

    fn members(&mut self, members: &'a [MemoryLayout]) -> usize {
        let place = Place::Members(members.as_ptr() as usize, members.len());
        self.shared(place, |me| {
            Key::Members(members.iter().map(|m| me.node(m)).collect())
        })
    }

    fn offsets(&mut self, offsets: &'a [usize]) -> usize {
        let place = Place::Offsets(offsets.as_ptr() as usize, offsets.len());
        self.shared(place, |_| {
            step(offsets.len());
            Key::Offsets(offsets)
        })
    }

    /// The number of a node behind an `Arc` (sequence element, pointer target).
    fn shared_node(&mut self, node: &'a MemoryLayout) -> usize {
        let place = Place::Node(node as *const MemoryLayout as usize);
        if let Some(&n) = self.seen.get(&place) {
            return n;
        }
        let n = self.node(node);
        self.seen.insert(place, n);
        n
    }

    fn node(&mut self, layout: &'a MemoryLayout) -> usize {
        match layout {
            MemoryLayout::Value(v) => self.value(v),
            MemoryLayout::Struct(s) => self.structure(s),
            MemoryLayout::Union(u) => self.union(u),
            MemoryLayout::Sequence(s) => self.sequence(s),
            MemoryLayout::Padding(p) => self.padding(p),
        }
    }

    fn value(&mut self, v: &'a ValueLayout) -> usize {
        step(1);
        let target = match (self.mode, v.pointer_target()) {
            (Compare::Exact, Some(PointerTarget::Layout(t))) => self.shared_node(t),
            (Compare::Exact, Some(PointerTarget::CString)) => self.number(Key::CString),
            (Compare::Exact, Some(PointerTarget::Enclosing(name))) => {
                let name = self.name(Some(name));
                self.number(Key::Enclosing(name))
            }
            _ => 0,
        };
        let key = Key::Value {
            kind: v.kind(),
            align: v.byte_alignment(),
            name: self.name(v.name()),
            target,
        };
        self.number(key)
    }

    fn structure(&mut self, s: &'a StructLayout) -> usize {
        step(1);
        let key = Key::Struct {
            size: s.byte_size,
            align: s.byte_alignment,
            name: self.name(s.name()),
            members: self.members(&s.members),
            offsets: self.offsets(&s.offsets),
        };
        self.number(key)
    }

    fn union(&mut self, u: &'a UnionLayout) -> usize {
        step(1);
        let key = Key::Union {
            size: u.byte_size,
            align: u.byte_alignment,
            name: self.name(u.name()),
            members: self.members(&u.members),
        };
        self.number(key)
    }

    fn sequence(&mut self, s: &'a SequenceLayout) -> usize {
        step(1);
        let key = Key::Sequence {
            count: s.count,
            align: s.byte_alignment,
            name: self.name(s.name()),
            element: self.shared_node(&s.element),
        };
        self.number(key)
    }

    fn padding(&mut self, p: &'a PaddingLayout) -> usize {
        step(1);
        let key = Key::Padding {
            size: p.byte_size,
            name: self.name(p.name()),
        };
        self.number(key)
    }
}

impl PartialEq for MemoryLayout {
    /// Structural equality (kind, size, alignment, names, members, offsets, counts, targets).
    /// Linear in the size of the two layouts, however much they share (see `compare.rs`).
    fn eq(&self, other: &Self) -> bool {
        equal(self, other, Compare::Exact, direct, Interner::node)
    }
}
impl Eq for MemoryLayout {}

impl PartialEq for StructLayout {
    fn eq(&self, other: &Self) -> bool {
        equal(
            self,
            other,
            Compare::Exact,
            direct_struct,
            Interner::structure,
        )
    }
}
impl Eq for StructLayout {}

impl PartialEq for UnionLayout {
    fn eq(&self, other: &Self) -> bool {
        equal(self, other, Compare::Exact, direct_union, Interner::union)
    }
}
impl Eq for UnionLayout {}

impl PartialEq for SequenceLayout {
    fn eq(&self, other: &Self) -> bool {
        equal(
            self,
            other,
            Compare::Exact,
            direct_sequence,
            Interner::sequence,
        )
    }
}
impl Eq for SequenceLayout {}

impl PartialEq for PaddingLayout {
    fn eq(&self, other: &Self) -> bool {
        padding_eq(self, other, Compare::Exact)
    }
}
impl Eq for PaddingLayout {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways of comparing, forced: the walk without a budget, and numbering.
    fn both(a: &MemoryLayout, b: &MemoryLayout, mode: Compare) -> (bool, bool) {
        let mut unlimited = usize::MAX;
        let walked = direct(a, b, mode, &mut unlimited).expect("no budget to run out");
        let mut interner = Interner::new(mode);
        (walked, interner.node(a) == interner.node(b))
    }

    /// Layouts that differ from one another in one field each (and some that do not).
    fn variants() -> Vec<MemoryLayout> {
        let v = |l: ValueLayout| MemoryLayout::from(l);
        let i32 = ValueLayout::I32;
        let s = |m: Vec<MemoryLayout>| MemoryLayout::c_struct(m).unwrap();
        let u = |m: Vec<MemoryLayout>| MemoryLayout::union_layout(m).unwrap();
        let seq = |n, e: MemoryLayout| MemoryLayout::sequence_layout(n, e).unwrap();
        let pad = |n| MemoryLayout::padding_layout(n).unwrap();
        let base = s(vec![v(i32.clone()), v(ValueLayout::I8)]);
        // SAFETY: nothing is read through these layouts.
        let ptr = |t: PointerTarget| v(unsafe { ValueLayout::ADDRESS.with_target(t) }.unwrap());
        let to = |l: MemoryLayout| ptr(PointerTarget::Layout(l));
        vec![
            v(i32.clone()),
            v(ValueLayout::U32),
            v(ValueLayout::F32),
            v(i32.clone().with_name("x")),
            v(i32.clone().with_name("y")),
            v(i32.clone().with_name("")),
            v(i32.clone().with_byte_alignment(1).unwrap()),
            v(ValueLayout::ADDRESS),
            to(base.clone()),
            to(v(i32.clone())),
            to(v(i32.clone().with_name("x"))),
            base.clone(),
            base.clone().with_name("s"),
            base.clone().with_byte_alignment(16).unwrap(),
            s(vec![v(ValueLayout::I8), v(i32.clone())]),
            s(vec![v(i32.clone()), v(ValueLayout::I8.with_name("x"))]),
            s(vec![v(i32.clone())]),
            s(vec![]),
            MemoryLayout::struct_layout(vec![v(i32.clone()), v(ValueLayout::I8), pad(3)]).unwrap(),
            MemoryLayout::struct_layout(vec![v(ValueLayout::I8), pad(3), v(i32.clone())]).unwrap(),
            MemoryLayout::c_struct_packed(vec![v(ValueLayout::I8), v(i32.clone())], 1).unwrap(),
            u(vec![v(i32.clone()), v(ValueLayout::I8)]),
            u(vec![v(ValueLayout::I8), v(i32.clone())]),
            u(vec![v(i32.clone())]),
            u(vec![]),
            u(vec![base.clone(), base.clone()]),
            u(vec![base.clone(), base.clone().with_name("s")]),
            seq(2, v(i32.clone())),
            seq(3, v(i32.clone())),
            seq(2, v(ValueLayout::U32)),
            seq(2, v(i32.clone())).with_name("a"),
            seq(2, base.clone()),
            pad(4),
            pad(4).with_name("p"),
            pad(5),
            ptr(PointerTarget::CString),
            ptr(PointerTarget::Enclosing("s".into())),
            ptr(PointerTarget::Enclosing("t".into())),
            s(vec![ptr(PointerTarget::Enclosing("s".into()))]).with_name("s"),
            s(vec![to(base.clone())]).with_name("s"),
        ]
    }

    #[test]
    fn walk_and_numbering_agree_on_every_pair() {
        let a = variants();
        let b = variants(); // separately built: equal pairs share no Arcs
        for mode in [Compare::Exact, Compare::Declaration, Compare::Shape] {
            for (i, x) in a.iter().enumerate() {
                for (j, y) in b.iter().enumerate() {
                    // Miri is slow at hashing: there, each variant against itself and its
                    // neighbours only.
                    if cfg!(miri) && i.abs_diff(j) > 1 {
                        continue;
                    }
                    let (walked, numbered) = both(x, y, mode);
                    assert_eq!(walked, numbered, "{mode:?}: {x} vs {y}");
                    if mode == Compare::Exact {
                        assert_eq!(walked, i == j, "{x} vs {y}");
                        assert_eq!(x == y, i == j, "{x} vs {y}");
                    } else if mode == Compare::Declaration {
                        assert_eq!(same_declaration(x, y), walked, "{x} vs {y}");
                        if i == j {
                            assert!(walked, "{x}");
                        }
                    } else {
                        assert_eq!(same_shape(x, y), walked, "{x} vs {y}");
                        if i == j {
                            assert!(walked, "{x}");
                        }
                    }
                }
            }
        }
        // Shape-only comparison ignores names and targets, and nothing else.
        let shape = |i: usize, j: usize| same_shape(&a[i], &b[j]);
        assert!(shape(0, 3) && shape(0, 5) && shape(7, 8) && shape(8, 10));
        assert!(shape(11, 12) && shape(11, 15) && shape(25, 26) && shape(27, 30));
        assert!(shape(32, 33));
        assert!(!shape(0, 1) && !shape(0, 6) && !shape(11, 13) && !shape(11, 18));
        assert!(!shape(18, 19) && !shape(27, 28) && !shape(32, 34));
        // Declaration equality ignores targets (of every kind), and names count.
        let declared = |i: usize, j: usize| same_declaration(&a[i], &b[j]);
        assert!(declared(7, 8) && declared(8, 9) && declared(8, 35) && declared(36, 37));
        assert!(declared(39, 38) && declared(7, 36));
        assert!(!declared(0, 3) && !declared(11, 12) && !declared(0, 7) && !declared(38, 11));
    }

    /// `n` copies of one `n`-field struct in a union; with `odd`, the last field of the last
    /// copy is a u8.
    fn wide(n: usize, odd: bool) -> MemoryLayout {
        let fields = |last: ValueLayout| {
            MemoryLayout::c_struct((0..n).map(|i| {
                if i + 1 == n {
                    last.clone()
                } else {
                    ValueLayout::I8
                }
            }))
            .unwrap()
        };
        let s = fields(ValueLayout::I8);
        let o = fields(ValueLayout::U8);
        MemoryLayout::union_layout((0..n).map(|i| {
            if odd && i + 1 == n {
                o.clone()
            } else {
                s.clone()
            }
        }))
        .unwrap()
    }

    #[test]
    fn numbering_layouts_that_differ_at_the_very_end_is_linear() {
        // The path `==` takes if the cached hashes of two different layouts collided.
        let n = if cfg!(miri) { 60 } else { 2000 };
        let (a, b) = (wide(n, false), wide(n, true));
        for mode in [Compare::Exact, Compare::Shape] {
            STEPS.with(|s| s.set(0));
            let mut interner = Interner::new(mode);
            assert_ne!(interner.node(&a), interner.node(&b));
            let steps = STEPS.with(|s| s.get());
            // a: 2n slots + n offsets; b: 3n slots + 2n offsets.
            assert!(steps <= 2 * (3 * n + 5 * n), "{steps} steps for n = {n}");
        }
    }
}
