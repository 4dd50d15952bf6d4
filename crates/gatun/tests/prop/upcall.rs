// The Rust side of the upcall checkers `call_cb_<i>` (tests/prop/sigs.rs and
// tests/prop/layouts.rs, included first), shared through `include!` by tests/upcall_prop.rs
// and tests/stress.rs: what the closure behind the stub checks and returns. Paths are spelt
// out in full (no `use`), so the including file's imports never clash with these.

/// The payload bits of a scalar `Value` (floats as their bits, a bool as 0 or 1).
#[allow(dead_code)]
fn bits(v: &gatun::Value) -> Option<u64> {
    use gatun::Value;
    Some(match *v {
        Value::Bool(b) => b as u64,
        Value::I8(x) => x as u8 as u64,
        Value::I16(x) => x as u16 as u64,
        Value::I32(x) => x as u32 as u64,
        Value::I64(x) => x as u64,
        Value::U8(x) => x as u64,
        Value::U16(x) => x as u64,
        Value::U32(x) => x as u64,
        Value::U64(x) => x,
        Value::F32(x) => x.to_bits() as u64,
        Value::F64(x) => x.to_bits(),
        Value::Address(p) => p as usize as u64,
        _ => return None,
    })
}

/// The low `n` bytes of `x`.
#[allow(dead_code)]
fn low(x: u64, n: usize) -> u64 {
    if n == 8 {
        x
    } else {
        x & ((1u64 << (8 * n)) - 1)
    }
}

/// What the closure behind `call_cb_<i>`'s callback checks and returns: the signature's
/// layouts and leaves, the constants C passes, the values to return, and what went wrong in
/// the calls so far. `Send + Sync`: a stub's closure may run on any thread.
#[allow(dead_code)]
struct CbCheck {
    layouts: PropLayouts,
    /// The argument base ([`prop_cb_arg_base`]) and the return base ([`prop_cb_ret_base`]).
    ha: u64,
    hr: u64,
    errors: std::sync::Mutex<Vec<String>>,
    calls: std::sync::atomic::AtomicUsize,
}

#[allow(dead_code)]
impl CbCheck {
    /// The check of signature `i`.
    fn new(i: usize, sig: &PropSig) -> CbCheck {
        CbCheck {
            layouts: PropLayouts::new(i, sig),
            ha: prop_cb_arg_base(i),
            hr: prop_cb_ret_base(i),
            errors: std::sync::Mutex::new(Vec::new()),
            calls: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The stub's descriptor.
    fn descriptor(&self) -> &gatun::linker::FunctionDescriptor {
        &self.layouts.descriptor
    }

    /// The closure's body: counts the call, compares every leaf of every argument with the
    /// constants C passes (a mismatch is recorded in `errors`) and returns the values C
    /// expects.
    fn call<'a>(&self, a: &gatun::UpcallArgs<'a>) -> gatun::Result<gatun::Value<'a>> {
        use gatun::{MemoryLayout, Value};
        self.calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut errs = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        if a.len() != self.layouts.args.len() {
            errs.push(format!("{} arguments, want {}", a.len(), self.layouts.args.len()));
            return Ok(Value::Void);
        }
        let mut n = 0;
        for (j, (l, leaves)) in self.layouts.args.iter().enumerate() {
            if let MemoryLayout::Value(v) = l {
                let k = leaves[0].1;
                let want = low(ret_leaf(self.ha, n, k), v.byte_size());
                n += 1;
                let got = bits(&a[j]);
                if a[j].scalar_kind() != Some(v.kind()) || got != Some(want) {
                    errs.push(format!("argument {j}: got {:?}, want {:#x}", a[j], want));
                }
                continue;
            }
            let seg = match a.segment(j) {
                Ok(s) => s,
                Err(e) => {
                    errs.push(format!("argument {j}: {e}"));
                    return Ok(Value::Void);
                }
            };
            if seg.byte_size() != l.byte_size() {
                errs.push(format!(
                    "argument {j}: {} bytes, want {}",
                    seg.byte_size(),
                    l.byte_size()
                ));
                return Ok(Value::Void);
            }
            for &(off, k) in leaves {
                let size = KINDS[k].byte_size();
                let mut b = [0u8; 8];
                seg.copy_to_slice(off, &mut b[..size])?;
                let want = low(ret_leaf(self.ha, n, k), size);
                if leaf_value(&b[..size]) != want {
                    errs.push(format!(
                        "argument {j}, leaf {n} ({}) at byte {off}: got {:?}, want {want:#x}",
                        PROP_C_TYPES[k],
                        &b[..size]
                    ));
                }
                n += 1;
            }
        }
        Ok(match &self.layouts.ret {
            None => Value::Void,
            Some((MemoryLayout::Value(v), leaves)) => {
                common::value_from_bits(v.kind(), ret_leaf(self.hr, 0, leaves[0].1))
            }
            Some((_, leaves)) => {
                let out = a.return_segment().expect("a struct return segment");
                out.fill(0);
                for (idx, &(off, k)) in leaves.iter().enumerate() {
                    let size = KINDS[k].byte_size();
                    out.copy_from_slice(off, &leaf_bytes(ret_leaf(self.hr, idx, k), size))?;
                }
                Value::Void
            }
        })
    }

    /// The errors recorded so far, joined (empty when every call was right).
    fn errors(&self) -> String {
        self.errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .join("; ")
    }
}

/// `call_cb_<i>`'s result: `Ok` if C saw every return leaf right.
#[allow(dead_code)]
fn cb_result(rc: gatun::Value) -> Result<(), String> {
    match rc {
        gatun::Value::I32(0) => Ok(()),
        gatun::Value::I32(leaf) => Err(format!("C saw a wrong return leaf {}", leaf - 1)),
        rc => Err(format!("C returned {rc:?}")),
    }
}
