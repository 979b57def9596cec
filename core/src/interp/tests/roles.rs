//! Roles (`T.ws`) and phased barriers: processes, arrival counting,
//! private per-thread state and deadlocks.

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

/// A loader role hands four values, one per round, to a consumer role
/// through a one-slot buffer and two barriers; the consumer accumulates
/// them in a `var` of its own. Every handover needs the other role to
/// have moved on, so the run interleaves the two roles.
const HANDOVER: &str = "tile_ir 0.1

func @f(%A: global i32[4], %B: global i32[1]) {
  kernel grid(1) threads(256) block(%bx) thread(%tx) {
    alloc %slot: shared i32[1]
    alloc %sum: var i32[1] = 0
    alloc_barrier %full: barrier u64[1] counts(128)
    alloc_barrier %empty: barrier u64[1] counts(128)
    for %i in serial(0, 4) {
      role groups(1) {
        wait %empty[0] parity (%i + 1) % 2
        %slot[0] = %A[%i]
        %sum[0] = -100
        arrive %full[0]
      }
      role groups(0) {
        wait %full[0] parity %i % 2
        %sum[0] = %sum[0] + %slot[0]
        arrive %empty[0]
      }
    }
    role groups(0) {
      %B[0] = %sum[0]
    }
  }
}
";

#[test]
fn roles_hand_values_over_through_barriers() {
    let f = function(HANDOVER);
    let mut args = vec![
        Tensor {
            dtype: DType::I32,
            shape: vec![4],
            data: TensorData::Int(vec![1, 20, 300, 4000]),
        },
        Tensor::zeros(DType::I32, [1]),
    ];
    run(&f, &mut args).expect("runs");
    // The loader's writes to its own `%sum` never reach the consumer's.
    assert_eq!(ints(&args[1]), vec![4321]);
}

#[test]
fn a_wait_nobody_can_complete_is_a_deadlock_naming_every_waiting_role() {
    // The loader waits for the consumer to free the slot before it ever
    // filled it: each role waits for the other's first arrival.
    let src = HANDOVER.replace(
        "wait %empty[0] parity (%i + 1) % 2",
        "wait %empty[0] parity %i % 2",
    );
    let f = function(&src);
    let mut args = vec![
        Tensor::zeros(DType::I32, [4]),
        Tensor::zeros(DType::I32, [1]),
    ];
    let err = run(&f, &mut args).expect_err("deadlocks");
    let InterpError::Deadlock { waits, .. } = &err else {
        panic!("expected a deadlock, got {err}");
    };
    let who: Vec<&str> = waits.iter().map(|(w, _)| w.as_str()).collect();
    assert_eq!(who, ["warp groups [1]", "warp groups [0]"], "{err}");
    assert!(err.span().is_some());
}

#[test]
fn a_phase_completes_when_its_count_of_threads_has_arrived() {
    // 256 arrivals per phase: one 128-thread role alone completes none,
    // the two roles together complete one; the waiter runs in neither.
    let src = "tile_ir 0.1

func @f(%B: global i32[2]) {
  kernel grid(1) threads(384) block(%bx) thread(%tx) {
    alloc_barrier %bar: barrier u64[1] counts(256)
    role groups(0) {
      arrive %bar[0]
    }
    role groups(1) {
      arrive %bar[0]
    }
    role groups(2) {
      wait %bar[0] parity 0
      %B[0] = 7
    }
  }
}
";
    let f = function(src);
    let mut args = vec![Tensor::zeros(DType::I32, [2])];
    run(&f, &mut args).expect("runs");
    assert_eq!(ints(&args[0]), vec![7, 0]);
    // With one role arriving, the wait never passes.
    let one = src.replace("    role groups(1) {\n      arrive %bar[0]\n    }\n", "");
    let err = run(&function(&one), &mut args).expect_err("deadlocks");
    assert!(matches!(err, InterpError::Deadlock { .. }), "{err}");
}

#[test]
fn tile_operations_between_roles_outside_them_are_refused() {
    let src = "tile_ir 0.1

func @f(%A: global f32[4]) {
  kernel grid(1) threads(256) block(%bx) thread(%tx) {
    for %i in serial(0, 2) {
      role groups(0) {
        fill %A[0 +: 4], f32(1.0)
      }
      fill %A[0 +: 4], f32(2.0)
      role groups(1) {
        fill %A[0 +: 4], f32(3.0)
      }
    }
  }
}
";
    let err = run(&function(src), &mut [Tensor::zeros(DType::F32, [4])]).expect_err("refused");
    assert!(
        matches!(&err, InterpError::Unsupported { what, .. } if what.contains("a `fill` outside `T.ws`")),
        "{err}"
    );
}

#[test]
fn in_a_block_without_roles_every_thread_arrives() {
    // 128 threads, 128 arrivals per phase: one `arrive` of the block
    // completes phase 0, and a second one phase 1.
    let src = "tile_ir 0.1

func @f(%B: global i32[1]) {
  kernel grid(1) threads(128) block(%bx) thread(%tx) {
    alloc_barrier %bar: barrier u64[1] counts(128)
    arrive %bar[0]
    wait %bar[0] parity 0
    %B[0] = 5
  }
}
";
    let mut args = vec![Tensor::zeros(DType::I32, [1])];
    run(&function(src), &mut args).expect("runs");
    assert_eq!(ints(&args[0]), vec![5]);
    // A count above the block's threads is never met by one arrive.
    let more = src.replace("counts(128)", "counts(256)");
    let err = run(&function(&more), &mut args).expect_err("deadlocks");
    assert!(matches!(err, InterpError::Deadlock { .. }), "{err}");
}
