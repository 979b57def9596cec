//! Running whole functions: argument checking, symbolic sizes, kernels,
//! control flow, allocation, out-of-bounds rules and errors.

use super::{Fb, block, tensor};
use crate::interp::{
    InterpError, RunOptions, SymbolValues, Tensor, TensorData, bind_symbols, param_shapes, run,
    run_with,
};
use crate::ir::{BinaryOp, DType, Scope, Span, Stmt, UnaryOp};

/// `A: [M, 4] f32`, `B: [M * 2] f32`, `C: [8, M] i32` with `out = B` copied
/// from nothing; enough to exercise binding.
fn symbolic_fn() -> Fb {
    let mut fb = Fb::new();
    let m = fb.symbol("M");
    let (me, four, two, eight) = (fb.v(m), fb.int(4), fb.int(2), fb.int(8));
    let m2 = fb.bin(BinaryOp::Mul, me, two);
    fb.param_with("A", DType::F32, vec![me, four]);
    fb.param_with("B", DType::F32, vec![m2]);
    fb.param_with("C", DType::I32, vec![eight, me]);
    fb
}

#[test]
fn symbols_bind_from_argument_shapes() {
    let fb = symbolic_fn();
    let shapes = vec![vec![3, 4], vec![6], vec![8, 3]];
    let bound = bind_symbols(&fb.f, &shapes).expect("binds");
    assert_eq!(bound, SymbolValues::from([("M".to_string(), 3)]));
    assert_eq!(param_shapes(&fb.f, &bound).expect("shapes"), shapes);

    let err = |shapes: Vec<Vec<usize>>| bind_symbols(&fb.f, &shapes).expect_err("mismatch");
    // B's compound extent M * 2 disagrees.
    assert_eq!(
        err(vec![vec![3, 4], vec![7], vec![8, 3]]),
        InterpError::ArgShape {
            param: "B".into(),
            dim: 0,
            expected: 6,
            found: 7
        }
    );
    // A literal extent disagrees.
    assert_eq!(
        err(vec![vec![3, 5], vec![6], vec![8, 3]]),
        InterpError::ArgShape {
            param: "A".into(),
            dim: 1,
            expected: 4,
            found: 5
        }
    );
    // Two bare uses of M disagree.
    assert_eq!(
        err(vec![vec![3, 4], vec![6], vec![8, 2]]),
        InterpError::SymbolConflict {
            name: "M".into(),
            param: "C".into(),
            first: 3,
            second: 2
        }
    );
    assert_eq!(
        err(vec![vec![3, 4], vec![6]]),
        InterpError::ArgCount {
            function: "test".into(),
            expected: 3,
            found: 2
        }
    );
    assert_eq!(
        err(vec![vec![3, 4, 1], vec![6], vec![8, 3]]),
        InterpError::ArgRank {
            param: "A".into(),
            expected: 2,
            found: 3
        }
    );
    // param_shapes names a missing symbol.
    assert_eq!(
        param_shapes(&fb.f, &SymbolValues::new()),
        Err(InterpError::UnboundSymbol { name: "M".into() })
    );
    assert_eq!(
        param_shapes(&fb.f, &SymbolValues::from([("Q".to_string(), 1)])),
        Err(InterpError::UnknownSymbol { name: "Q".into() })
    );
    assert!(matches!(
        param_shapes(&fb.f, &SymbolValues::from([("M".to_string(), -1)])),
        Err(InterpError::NegativeExtent { .. })
    ));
}

#[test]
fn run_checks_arguments() {
    let fb = symbolic_fn();
    let good = || {
        vec![
            Tensor::zeros(DType::F32, [3, 4]),
            Tensor::zeros(DType::F32, [6]),
            Tensor::zeros(DType::I32, [8, 3]),
        ]
    };
    run(&fb.f, &mut good()).expect("runs");
    let mut args = good();
    args[2] = Tensor::zeros(DType::I64, [8, 3]);
    assert_eq!(
        run(&fb.f, &mut args),
        Err(InterpError::ArgDtype {
            param: "C".into(),
            expected: DType::I32,
            found: DType::I64
        })
    );
    let mut args = good();
    args[1].data = TensorData::Float(vec![0.0; 5]);
    assert!(matches!(
        run(&fb.f, &mut args),
        Err(InterpError::ArgData { ref param, .. }) if param == "B"
    ));
    let mut args = good();
    args[1].data = TensorData::Int(vec![0; 6]);
    assert!(matches!(
        run(&fb.f, &mut args),
        Err(InterpError::ArgData { ref param, .. }) if param == "B"
    ));
    let mut args = good();
    args[1] = Tensor::zeros(DType::F32, [5]);
    assert!(matches!(
        run(&fb.f, &mut args),
        Err(InterpError::ArgShape { .. })
    ));
}

#[test]
fn symbols_drive_the_body_and_can_be_given_explicitly() {
    // X: [N * 2] f32 (N only in a compound extent); out[i] = N for i < N*2.
    let mut fb = Fb::new();
    let n = fb.symbol("N");
    let (ne, two) = (fb.v(n), fb.int(2));
    let n2 = fb.bin(BinaryOp::Mul, ne, two);
    let x = fb.param_with("X", DType::I32, vec![n2]);
    let zero = fb.int(0);
    let lp = fb.serial(zero, n2, |fb, i| {
        let ne = fb.v(n);
        block(vec![fb.store(x, &[i], ne)])
    });
    fb.body(vec![lp]);
    let mut args = vec![Tensor::zeros(DType::I32, [4])];
    assert_eq!(
        run(&fb.f, &mut args),
        Err(InterpError::UnboundSymbol { name: "N".into() })
    );
    let options = RunOptions {
        symbols: SymbolValues::from([("N".to_string(), 2)]),
        ..RunOptions::default()
    };
    run_with(&fb.f, &mut args, &options).expect("runs with N given");
    assert_eq!(args[0].data, TensorData::Int(vec![2; 4]));
    let options = RunOptions {
        symbols: SymbolValues::from([("N".to_string(), 3)]),
        ..RunOptions::default()
    };
    assert!(matches!(
        run_with(&fb.f, &mut args, &options),
        Err(InterpError::ArgShape { .. })
    ));
}

#[test]
fn scalar_out_of_bounds_on_shared_is_an_error_with_span() {
    let mut fb = Fb::new();
    let out = fb.param("out", DType::F32, &[1]);
    let s = fb.buffer("S", DType::F32, Scope::Shared, &[4, 2]);
    let kernel = fb.kernel(&[1], |fb, _| {
        let (i0, i3, i2) = (fb.int(0), fb.int(3), fb.int(2));
        let one = fb.flit(DType::F32, 1.0);
        let alloc = fb.alloc(s);
        let ok = fb.store(s, &[i3, i0], one);
        let bad = fb.store(s, &[i3, i2], one);
        let never = fb.store(out, &[i0], one);
        block(vec![alloc, ok, bad, never])
    });
    fb.body(vec![kernel]);
    let mut args = vec![Tensor::zeros(DType::F32, [1])];
    let err = run(&fb.f, &mut args).expect_err("out of bounds");
    assert_eq!(
        err,
        InterpError::OutOfBounds {
            buffer: "S".into(),
            scope: "shared",
            indices: vec![3, 2],
            shape: vec![4, 2],
            span: Span::new(1020, 1025),
        }
    );
    // Arguments survive a failed run.
    assert_eq!(args[0].data, TensorData::Float(vec![0.0]));

    // A load out of bounds of a local buffer also fails.
    let mut fb = Fb::new();
    let out = fb.param("out", DType::F32, &[1]);
    let l = fb.buffer("L", DType::F32, Scope::Local, &[2]);
    let (i0, im1) = (fb.int(0), fb.int(-1));
    let load = fb.load(l, &[im1]);
    let alloc = fb.alloc(l);
    let st = fb.store(out, &[i0], load);
    fb.body(vec![alloc, st]);
    let err = run(&fb.f, &mut [Tensor::zeros(DType::F32, [1])]).expect_err("oob");
    assert!(
        matches!(err, InterpError::OutOfBounds { ref buffer, .. } if buffer == "L"),
        "{err}"
    );
    assert_eq!(err.span(), Some(Span::new(10, 15)));
}

#[test]
fn scalar_out_of_bounds_on_global_reads_zero_and_skips() {
    // out[i] = A[i + 1] for i in 0..4 over A of 3 elements: [a1, a2, 0, 0];
    // then out[7] = 9 is skipped.
    let mut fb = Fb::new();
    let a = fb.param("A", DType::F32, &[3]);
    let out = fb.param("out", DType::F32, &[4]);
    let nest = fb.parallel(&[4], |fb, i| {
        let one = fb.int(1);
        let j = fb.bin(BinaryOp::Add, i[0], one);
        let v = fb.load(a, &[j]);
        block(vec![fb.store(out, &[i[0]], v)])
    });
    let (seven, nine) = (fb.int(7), fb.flit(DType::F32, 9.0));
    let skipped = fb.store(out, &[seven], nine);
    fb.body(vec![nest, skipped]);
    let mut args = vec![
        tensor(DType::F32, &[3], &[1.0, 2.0, 3.0]),
        Tensor::from_f64(DType::F32, [4], vec![-1.0; 4]).expect("tensor"),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[1].to_f64_vec(), vec![2.0, 3.0, 0.0, 0.0]);
}

/// The kernel's thread index, which the builder declares as `tx` with the
/// kernel.
fn thread_index(fb: &mut Fb) -> crate::ir::Handle<crate::ir::Expr> {
    let tx =
        fb.f.vars
            .iter()
            .find(|(_, v)| v.name == "tx")
            .map(|(h, _)| h)
            .expect("thread var");
    fb.v(tx)
}

#[test]
fn per_thread_stores_run_once_per_thread() {
    // out[0] = 7 before the kernel; inside it every thread stores its own
    // index: out[tx] = tx over the 128 threads.
    let mut fb = Fb::new();
    let out = fb.param("out", DType::I32, &[128]);
    let i0 = fb.int(0);
    let seven = fb.int(7);
    let first = fb.store(out, &[i0], seven);
    let kernel = fb.kernel(&[1], |fb, _| {
        let t = thread_index(fb);
        block(vec![fb.store(out, &[t], t)])
    });
    fb.body(vec![first, kernel]);
    let mut args = vec![Tensor::zeros(DType::I32, [128])];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[0].data, TensorData::Int((0..128).collect()));
}

#[test]
fn per_thread_fragment_store_is_unsupported_before_anything_runs() {
    let mut fb = Fb::new();
    let out = fb.param("out", DType::I32, &[128]);
    let i0 = fb.int(0);
    let seven = fb.int(7);
    let first = fb.store(out, &[i0], seven);
    // Larger than a per-thread copy may be (`ir::per_thread::MAX_ELEMS`),
    // so it keeps one copy per block and the per-thread store is refused.
    let local = fb.buffer("acc", DType::I32, Scope::Fragment, &[256]);
    let kernel = fb.kernel(&[1], |fb, _| {
        let t = thread_index(fb);
        let zero = fb.int(0);
        let alloc = fb.alloc(local);
        block(vec![alloc, fb.store(local, &[zero], t)])
    });
    fb.body(vec![first, kernel]);
    let mut args = vec![Tensor::zeros(DType::I32, [128])];
    let err = run(&fb.f, &mut args).expect_err("per-thread fragment store");
    assert!(matches!(err, InterpError::Unsupported { .. }), "{err}");
    assert!(
        err.to_string().contains("one copy of it per thread"),
        "{err}"
    );
    // Nothing ran: the store before the kernel did not happen.
    assert_eq!(args[0].data, TensorData::Int(vec![0; 128]));
}

#[test]
fn kernels_run_in_order_and_blocks_row_major() {
    // Kernel 1 (grid 3×2): log[counter] = by * 3 + bx; counter += 1, and
    // tmp[by, bx] = 10 * (by * 3 + bx) into a function-level global scratch.
    // Kernel 2 (grid 1): out = tmp + 1 elementwise.
    let mut fb = Fb::new();
    let log = fb.param("log", DType::I32, &[6]);
    let out = fb.param("out", DType::I32, &[2, 3]);
    let tmp = fb.buffer("tmp", DType::I32, Scope::Global, &[2, 3]);
    let counter = fb.buffer("counter", DType::I32, Scope::Global, &[1]);
    let k1 = fb.kernel(&[3, 2], |fb, v| {
        let (bx, by) = (fb.v(v[0]), fb.v(v[1]));
        let (three, ten, zero, one) = (fb.int(3), fb.int(10), fb.int(0), fb.int(1));
        let row = fb.bin(BinaryOp::Mul, by, three);
        let id = fb.bin(BinaryOp::Add, row, bx);
        let c = fb.load(counter, &[zero]);
        let c1 = fb.bin(BinaryOp::Add, c, one);
        let tid = fb.bin(BinaryOp::Mul, id, ten);
        block(vec![
            fb.store(log, &[c], id),
            fb.store(counter, &[zero], c1),
            fb.store(tmp, &[by, bx], tid),
        ])
    });
    let k2 = fb.kernel(&[1], |fb, _| {
        block(vec![fb.parallel(&[2, 3], |fb, i| {
            let one = fb.int(1);
            let t = fb.load(tmp, &[i[0], i[1]]);
            let t1 = fb.bin(BinaryOp::Add, t, one);
            block(vec![fb.store(out, &[i[0], i[1]], t1)])
        })])
    });
    let (a1, a2) = (fb.alloc(tmp), fb.alloc(counter));
    fb.body(vec![a1, a2, k1, k2]);
    let mut args = vec![
        Tensor::zeros(DType::I32, [6]),
        Tensor::zeros(DType::I32, [2, 3]),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[0].data, TensorData::Int(vec![0, 1, 2, 3, 4, 5]));
    assert_eq!(args[1].data, TensorData::Int(vec![1, 11, 21, 31, 41, 51]));
}

#[test]
fn fresh_block_storage_is_poisoned_and_var_init_applies() {
    // Per block: record isnan(S[0]) (shared f32), L[0] (local i32), V[0]
    // (var with init 5); then write S[0] = 1, L[0] = 1, V[0] = 9 so that a
    // second block would see them if storage were reused.
    let mut fb = Fb::new();
    let nan_seen = fb.param("nan_seen", DType::Bool, &[2]);
    let local_seen = fb.param("local_seen", DType::I32, &[2]);
    let var_seen = fb.param("var_seen", DType::I32, &[2]);
    let s = fb.buffer("S", DType::F32, Scope::Shared, &[2]);
    let l = fb.buffer("L", DType::I32, Scope::Local, &[2]);
    let v = fb.buffer("V", DType::I32, Scope::Var, &[1]);
    let kernel = fb.kernel(&[2], |fb, bv| {
        let bx = fb.v(bv[0]);
        let (zero, one, nine, five) = (fb.int(0), fb.int(1), fb.int(9), fb.int(5));
        let one_f = fb.flit(DType::F32, 1.0);
        let s0 = fb.load(s, &[zero]);
        let isnan = fb.un(UnaryOp::IsNan, s0);
        let l0 = fb.load(l, &[zero]);
        let v0 = fb.load(v, &[zero]);
        block(vec![
            fb.alloc(s),
            fb.alloc(l),
            Stmt::Alloc {
                buffer: v,
                init: Some(five),
            },
            fb.store(nan_seen, &[bx], isnan),
            fb.store(local_seen, &[bx], l0),
            fb.store(var_seen, &[bx], v0),
            fb.store(s, &[zero], one_f),
            fb.store(l, &[zero], one),
            fb.store(v, &[zero], nine),
        ])
    });
    fb.body(vec![kernel]);
    let mut args = vec![
        Tensor::zeros(DType::Bool, [2]),
        Tensor::zeros(DType::I32, [2]),
        Tensor::zeros(DType::I32, [2]),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[0].data, TensorData::Int(vec![1, 1]));
    let garbage = i64::from(0xDEAD_BEEF_u32 as i32);
    assert_eq!(args[1].data, TensorData::Int(vec![garbage, garbage]));
    assert_eq!(args[2].data, TensorData::Int(vec![5, 5]));
}

#[test]
fn loops_lets_and_branches() {
    // acc: var i32 = 0; for i in 2..5: let sq = i * i; if sq > 5: acc += sq
    // else acc -= 100; out[0] = acc → -100 + 9 + 16 = -75.
    // Parallel 2×3 order: log[k] = 10 * i + j with k counted in a var.
    let mut fb = Fb::new();
    let out = fb.param("out", DType::I32, &[1]);
    let log = fb.param("log", DType::I32, &[6]);
    let acc = fb.buffer("acc", DType::I32, Scope::Var, &[1]);
    let k = fb.buffer("k", DType::I32, Scope::Var, &[1]);
    let (zero, two, three) = (fb.int(0), fb.int(2), fb.int(3));
    let lp = fb.serial(two, three, |fb, i| {
        let sq = fb.var("sq", DType::I32, crate::ir::VarKind::Let);
        let value = fb.bin(BinaryOp::Mul, i, i);
        let sqe = fb.v(sq);
        let (five, hundred, zero) = (fb.int(5), fb.int(100), fb.int(0));
        let cond = fb.bin(BinaryOp::Gt, sqe, five);
        let a = fb.load(acc, &[zero]);
        let plus = fb.bin(BinaryOp::Add, a, sqe);
        let minus = fb.bin(BinaryOp::Sub, a, hundred);
        block(vec![
            Stmt::Let { var: sq, value },
            Stmt::If {
                cond,
                then: block(vec![fb.store(acc, &[zero], plus)]),
                otherwise: block(vec![fb.store(acc, &[zero], minus)]),
            },
        ])
    });
    let nest = fb.parallel(&[2, 3], |fb, ij| {
        let (zero, one, ten) = (fb.int(0), fb.int(1), fb.int(10));
        let ti = fb.bin(BinaryOp::Mul, ij[0], ten);
        let id = fb.bin(BinaryOp::Add, ti, ij[1]);
        let kv = fb.load(k, &[zero]);
        let k1 = fb.bin(BinaryOp::Add, kv, one);
        block(vec![fb.store(log, &[kv], id), fb.store(k, &[zero], k1)])
    });
    let result = fb.load(acc, &[zero]);
    let fin = fb.store(out, &[zero], result);
    fb.body(vec![
        Stmt::Alloc {
            buffer: acc,
            init: Some(zero),
        },
        Stmt::Alloc {
            buffer: k,
            init: Some(zero),
        },
        lp,
        nest,
        fin,
    ]);
    let mut args = vec![
        Tensor::zeros(DType::I32, [1]),
        Tensor::zeros(DType::I32, [6]),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[0].data, TensorData::Int(vec![-75]));
    assert_eq!(args[1].data, TensorData::Int(vec![0, 1, 2, 10, 11, 12]));
}

#[test]
fn runaway_loops_hit_the_step_limit() {
    let mut fb = Fb::new();
    let out = fb.param("out", DType::I32, &[1]);
    let (zero, big) = (fb.int(0), fb.int(2_000_000_000));
    let lp = fb.serial(zero, big, |fb, i| {
        let zero = fb.int(0);
        block(vec![fb.store(out, &[zero], i)])
    });
    fb.body(vec![lp]);
    let options = RunOptions {
        step_limit: 10_000,
        ..RunOptions::default()
    };
    let err = run_with(&fb.f, &mut [Tensor::zeros(DType::I32, [1])], &options).expect_err("limit");
    assert!(
        matches!(err, InterpError::StepLimit { limit: 10_000, .. }),
        "{err}"
    );
    assert!(err.span().is_some());
}

#[test]
fn assume_and_division_by_zero_report_their_statement() {
    let mut fb = Fb::new();
    let x = fb.param("x", DType::I32, &[1]);
    let zero = fb.int(0);
    let xv = fb.load(x, &[zero]);
    let positive = fb.bin(BinaryOp::Gt, xv, zero);
    let q = fb.var("q", DType::I32, crate::ir::VarKind::Let);
    let ten = fb.int(10);
    let div = fb.bin(BinaryOp::Div, ten, xv);
    fb.body(vec![
        Stmt::Barrier,
        Stmt::Let { var: q, value: div },
        Stmt::Assume { cond: positive },
    ]);
    let err = run(
        &fb.f,
        &mut [Tensor::from_i64(DType::I32, [1], vec![0]).expect("t")],
    )
    .expect_err("division by zero");
    assert_eq!(
        err,
        InterpError::DivisionByZero {
            span: Span::new(10, 15)
        }
    );
    let err = run(
        &fb.f,
        &mut [Tensor::from_i64(DType::I32, [1], vec![-2]).expect("t")],
    )
    .expect_err("assume");
    assert_eq!(
        err,
        InterpError::AssumeFailed {
            span: Span::new(20, 25)
        }
    );
    run(
        &fb.f,
        &mut [Tensor::from_i64(DType::I32, [1], vec![2]).expect("t")],
    )
    .expect("runs");
}

#[test]
fn tensor_helpers() {
    let t = Tensor::from_f64(DType::F16, [3], vec![0.1, 1e6, -2.0]).expect("tensor");
    assert_eq!(t.to_f64_vec(), vec![0.0999755859375, f64::INFINITY, -2.0]);
    assert_eq!(t.len(), 3);
    let t = Tensor::from_f64(DType::I8, [2], vec![200.7, -3.9]).expect("tensor");
    assert_eq!(t.data, TensorData::Int(vec![-56, -3]));
    let t = Tensor::from_i64(DType::U64, [1], vec![-1]).expect("tensor");
    assert_eq!(t.to_f64_vec(), vec![18_446_744_073_709_551_615.0]);
    assert!(Tensor::from_f64(DType::F32, [2, 2], vec![0.0; 3]).is_err());
    let z = Tensor::zeros(DType::Bool, [2, 0]);
    assert!(z.is_empty());
    assert_eq!(z.check(), Ok(()));
}

#[test]
fn deep_expressions_run_and_excessive_nesting_is_reported() {
    use crate::interp::expr::MAX_EXPR_DEPTH;
    let chain = |depth: usize| {
        let mut fb = Fb::new();
        let out = fb.param("out", DType::I32, &[1]);
        let mut e = fb.int(1);
        for _ in 0..depth {
            let one = fb.int(1);
            e = fb.bin(BinaryOp::Add, e, one);
        }
        let zero = fb.int(0);
        let st = fb.store(out, &[zero], e);
        fb.body(vec![st]);
        let mut args = vec![Tensor::zeros(DType::I32, [1])];
        run(&fb.f, &mut args).map(|()| args.remove(0))
    };
    let depth = MAX_EXPR_DEPTH - 10;
    let t = chain(depth).expect("deep chain runs");
    assert_eq!(t.data, TensorData::Int(vec![depth as i64 + 1]));
    let err = chain(MAX_EXPR_DEPTH + 10).expect_err("too deep");
    assert!(matches!(err, InterpError::Unsupported { .. }), "{err}");

    // A shared subexpression is compiled once: x_{k+1} = x_k + x_k over 40
    // levels would be 2^40 closures as a tree; with a false guard in front
    // it is never evaluated.
    let mut fb = Fb::new();
    let out = fb.param("out", DType::I32, &[1]);
    let mut x = fb.int(1);
    for _ in 0..40 {
        x = fb.bin(BinaryOp::Add, x, x);
    }
    let (zero, no) = (fb.int(0), fb.ilit(DType::Bool, 0));
    let guarded = fb.select(no, x, zero);
    let st = fb.store(out, &[zero], guarded);
    fb.body(vec![st]);
    run(&fb.f, &mut [Tensor::zeros(DType::I32, [1])]).expect("compiles in linear time");
}

/// A kernel over `grid` whose blocks each allocate three shared buffers of
/// `elements` f32 elements.
fn three_shared_buffers(grid: &[i64], elements: i64) -> Fb {
    let mut fb = Fb::new();
    fb.param("out", DType::F32, &[1]);
    let kernel = fb.kernel(grid, |fb, _| {
        let allocs = ["a", "b", "c"].map(|name| {
            let s = fb.buffer(name, DType::F32, Scope::Shared, &[elements]);
            fb.alloc(s)
        });
        block(allocs.to_vec())
    });
    fb.body(vec![kernel]);
    fb
}

#[test]
fn allocations_past_the_memory_limit_are_refused_before_they_are_made() {
    // 3 × 1000 elements of 8 bytes, plus the argument: 24,008 bytes.
    let fb = three_shared_buffers(&[2], 1000);
    let mut args = [Tensor::zeros(DType::F32, [1])];
    let fits = RunOptions {
        memory_limit: 24_008,
        ..RunOptions::default()
    };
    run_with(&fb.f, &mut args, &fits).expect("fits the limit exactly");
    let tight = RunOptions {
        memory_limit: 24_000,
        ..RunOptions::default()
    };
    let err = run_with(&fb.f, &mut args, &tight).expect_err("past the limit");
    assert!(
        matches!(
            &err,
            InterpError::MemoryLimit { what, bytes: 24_008, limit: 24_000, .. } if what.contains("`c`")
        ),
        "{err}"
    );
    assert!(err.is_limit());
    assert!(
        err.to_string().contains("memory limit of 24000 bytes"),
        "{err}"
    );

    // The probe: three 2^30-element shared buffers (24 GiB as f64) are
    // refused at the first, under the default limit, without allocating.
    let fb = three_shared_buffers(&[1], 1 << 30);
    let err = run_with(&fb.f, &mut args, &RunOptions::default()).expect_err("24 GiB");
    assert!(
        matches!(&err, InterpError::MemoryLimit { what, .. } if what.contains("`a`")),
        "{err}"
    );
}

#[test]
fn arguments_past_the_memory_limit_are_refused() {
    let options = RunOptions {
        memory_limit: 1 << 20,
        ..RunOptions::default()
    };
    crate::interp::check_arguments_fit(&[vec![256, 512]], &options).expect("1 MiB fits");
    let err = crate::interp::check_arguments_fit(&[vec![256, 512], vec![1]], &options)
        .expect_err("past 1 MiB");
    assert!(
        matches!(
            err,
            InterpError::MemoryLimit {
                bytes: 1_048_584,
                ..
            }
        ),
        "{err}"
    );
    let fb = three_shared_buffers(&[1], 1);
    let err = run_with(&fb.f, &mut [Tensor::zeros(DType::F32, [1 << 18])], &options)
        .expect_err("the argument alone");
    assert!(matches!(err, InterpError::MemoryLimit { .. }), "{err}");
}

#[test]
fn a_grid_larger_than_the_step_limit_is_refused_before_its_first_block() {
    // 2^40 blocks: refused at once, not after hours.
    let fb = three_shared_buffers(&[1 << 20, 1 << 20], 1);
    let start = std::time::Instant::now();
    let err = run_with(
        &fb.f,
        &mut [Tensor::zeros(DType::F32, [1])],
        &RunOptions::default(),
    )
    .expect_err("2^40 blocks");
    assert!(
        matches!(err, InterpError::GridTooLarge { blocks, .. } if blocks == 1 << 40),
        "{err}"
    );
    assert!(err.is_limit());
    assert!(start.elapsed().as_secs() < 5);
    // Blocks count against the limit over the whole run: 100 blocks of 4
    // steps each pass 300 steps though the grid itself fits.
    let fb = three_shared_buffers(&[100], 1);
    let options = RunOptions {
        step_limit: 300,
        ..RunOptions::default()
    };
    let err = run_with(&fb.f, &mut [Tensor::zeros(DType::F32, [1])], &options)
        .expect_err("steps over the grid");
    assert!(
        matches!(err, InterpError::StepLimit { limit: 300, .. }),
        "{err}"
    );
}
