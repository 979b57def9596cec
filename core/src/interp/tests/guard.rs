//! Thread-guarded regions: `if` on the thread index, with tile operations
//! run once over the passing threads and scalar statements run per thread.

use crate::interp::{InterpError, Tensor, TensorData, run};
use crate::ir::{DType, Function};

fn function(src: &str) -> Function {
    let module = crate::text::parse_module(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    crate::ir::verify::verify_module(&module).unwrap_or_else(|e| panic!("{e:?}"));
    module.functions.into_iter().next().expect("one function")
}

fn ints(t: &Tensor) -> Vec<i64> {
    match &t.data {
        TensorData::Int(v) => v.clone(),
        TensorData::Float(v) => v.iter().map(|&x| x as i64).collect(),
    }
}

/// A copy under `tx < 4` of an 8-thread block is one whole copy: all of
/// `B` is written, as TileLang spreads it over the four passing threads.
#[test]
fn a_guarded_copy_runs_once_as_a_whole_copy() {
    let f = function(
        "tile_ir 0.1

func @f(%A: global i32[8], %B: global i32[8]) {
  kernel grid(1) threads(8) block(%bx) thread(%tx) {
    if %tx < 4 {
      copy %A[0 +: 8] -> %B[0 +: 8]
    }
  }
}
",
    );
    let a: Vec<i64> = (1..=8).collect();
    let mut args = vec![
        Tensor::from_i64(DType::I32, [8], a.clone()).expect("tensor"),
        Tensor::zeros(DType::I32, [8]),
    ];
    run(&f, &mut args).expect("run");
    assert_eq!(ints(&args[1]), a);
}

/// Scalar statements under a guard run once per passing thread, with the
/// thread index (and `let`s computed from it) bound; the `else` branch runs
/// for the others.
#[test]
fn guarded_scalar_code_runs_per_thread() {
    let f = function(
        "tile_ir 0.1

func @f(%B: global i32[8]) {
  kernel grid(1) threads(8) block(%bx) thread(%tx) {
    let %half: i32 = %tx // 2
    if %tx % 2 == 0 {
      %B[%tx] = %half * 10
    } else {
      %B[%tx] = -1
    }
  }
}
",
    );
    let mut args = vec![Tensor::zeros(DType::I32, [8])];
    run(&f, &mut args).expect("run");
    assert_eq!(ints(&args[0]), vec![0, -1, 10, -1, 20, -1, 30, -1]);
}

/// Tile operations under a condition whose threads are not a range, and
/// stores into `var` buffers from per-thread code, are refused.
#[test]
fn guards_the_interpreter_cannot_follow_are_refused() {
    let not_range = function(
        "tile_ir 0.1

func @f(%A: global i32[8], %B: global i32[8]) {
  kernel grid(1) threads(8) block(%bx) thread(%tx) {
    if %tx % 2 == 0 {
      copy %A[0 +: 8] -> %B[0 +: 8]
    }
  }
}
",
    );
    let mut args = vec![
        Tensor::zeros(DType::I32, [8]),
        Tensor::zeros(DType::I32, [8]),
    ];
    let err = run(&not_range, &mut args).expect_err("not a range");
    assert!(matches!(err, InterpError::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("not a range"), "{err}");
    // A per-thread store into a `var` buffer that a parallel nest also
    // reads: which thread's copy an iteration sees is TileLang's layout
    // choice, so it is refused.
    let var = function(
        "tile_ir 0.1

func @f(%B: global i32[8]) {
  kernel grid(1) threads(8) block(%bx) thread(%tx) {
    alloc %v: var i32[1] = 5
    if %tx == 0 {
      %v[0] = %v[0] + 1
    }
    parallel (%i < 8) {
      %B[%i] = %v[0]
    }
  }
}
",
    );
    let mut args = vec![Tensor::zeros(DType::I32, [8])];
    let err = run(&var, &mut args).expect_err("per-thread var read by a nest");
    assert!(
        err.to_string().contains("one copy of it per thread"),
        "{err}"
    );
}

/// A `var` buffer that per-thread code stores into and that only scalar
/// code reads is kept once per thread: thread 0's increment changes its
/// own copy alone.
#[test]
fn per_thread_vars_keep_one_copy_per_thread() {
    let var = function(
        "tile_ir 0.1

func @f(%B: global i32[8]) {
  kernel grid(1) threads(8) block(%bx) thread(%tx) {
    alloc %v: var i32[1] = 5
    if %tx == 0 {
      %v[0] = %v[0] + 1
    }
    %B[%tx] = %v[0] * 10 + %tx
  }
}
",
    );
    let mut args = vec![Tensor::zeros(DType::I32, [8])];
    run(&var, &mut args).expect("per-thread var");
    let want: Vec<i64> = (0..8).map(|t| if t == 0 { 60 } else { 50 + t }).collect();
    assert_eq!(args[0].data, TensorData::Int(want));
}
