//! The lowering's choices as Tile IR annotations, and annotations as
//! pins.
//!
//! # Choices
//! A successful lowering of a kernel ([`Lower::choices`]) used, for every
//! buffer the kernel allocates, one layout (`ir::BufferLayout`): registers
//! in a matrix atom's accumulator fragment or per row of it (`infer.rs`,
//! `resident.rs`), registers spread over the threads (`spread.rs`), or
//! shared memory swizzled for a shared-operand atom (`swizzle.rs`),
//! padded (`pad.rs`) or dense. For every `T.Pipelined` loop it used one
//! schedule (`ir::PipelineSchedule`): serial, asynchronous copies into
//! `s` stages, bulk copies into `s` stages with or without a producer of
//! their own (`pipeline.rs`, `tma.rs`, `ws.rs`), or staging through
//! registers. The passes `infer-layouts`, `inject-pipeline` and
//! `warp-specialize` write these into the IR.
//!
//! # Pins
//! An annotation already in the IR (written by those passes or by hand)
//! *pins* that choice: the lowering takes it instead of choosing, and a
//! pinned choice it cannot realize is an error naming the buffer or loop
//! (never silently another layout). In detail:
//! - a buffer pinned to a shared layout is never kept in registers, and
//!   one pinned to any layout but `swizzled` keeps the kernel off the
//!   shared-operand atom (which swizzles all its operands);
//! - `swizzled(W)` is realized where no atom takes the buffer too, when
//!   its shape has `W`-byte panels (`swizzle.rs`, "Pinned layouts");
//! - `padded(p)` gives the buffer rows `p` elements apart whatever
//!   `pad.rs` would pick (`p` elements must be a whole number of 16-byte
//!   units, so that vector copies stay aligned); `shared` gives dense rows;
//! - a loop pinned to `serial` is not pipelined; to `async(s)`,
//!   `bulk(s, ..)` or `registers`, it is pipelined with `s` stages (2 for
//!   `registers`) when `pipeline.rs` can pipeline it in that form (for a
//!   loop with `order`/`stage` lists the pinned stage count wins over the
//!   lists' lookahead; `inject-pipeline` writes `D + 1`);
//!   `bulk(s, specialized)` and `bulk(s, unspecialized)` pin whether it
//!   gets a producer of its own;
//! - the retries of [`super::lower_kernel`] change only what is not
//!   pinned; when nothing unpinned is left to change, the error stands.

use std::collections::HashMap;

use super::{Lower, Result, ir};
use crate::ir::{BufferLayout, Handle, LoopKind, PipelineSchedule, Span};

/// Layouts and pipeline schedules the IR pins (module documentation).
#[derive(Clone, Debug, Default)]
pub(super) struct Pins {
    pub(super) layouts: HashMap<Handle<ir::Buffer>, BufferLayout>,
    pub(super) schedules: HashMap<Handle<ir::Var>, PipelineSchedule>,
    /// Where the pinned loops are.
    loop_spans: HashMap<Handle<ir::Var>, Span>,
}

impl Pins {
    /// The annotations of the buffers allocated in `body` and of its
    /// pipelined loops.
    pub(super) fn of(f: &ir::Function, body: &ir::Block) -> Pins {
        let mut pins = Pins::default();
        body.walk(&mut |stmt, span| match stmt {
            ir::Stmt::Alloc { buffer, .. } => {
                if let Some(layout) = f.buffers.try_get(*buffer).and_then(|b| b.layout.clone()) {
                    pins.layouts.insert(*buffer, layout);
                }
            }
            ir::Stmt::For {
                var,
                kind:
                    LoopKind::Pipelined {
                        schedule: Some(schedule),
                        ..
                    },
                ..
            } => {
                pins.schedules.insert(*var, *schedule);
                pins.loop_spans.insert(*var, span);
            }
            _ => {}
        });
        pins
    }

    /// Whether `b`'s layout is pinned.
    pub(super) fn buffer(&self, b: Handle<ir::Buffer>) -> bool {
        self.layouts.contains_key(&b)
    }

    /// The pinned schedule of the loop over `var`.
    pub(super) fn schedule(&self, var: Handle<ir::Var>) -> Option<PipelineSchedule> {
        self.schedules.get(&var).copied()
    }

    /// The pinned warp specialization, when a loop pins one.
    pub(super) fn specialized(&self) -> Option<bool> {
        self.schedules.values().find_map(|s| match s {
            PipelineSchedule::Bulk { specialized, .. } => *specialized,
            _ => None,
        })
    }
}

/// What one successful lowering of a kernel chose (module documentation),
/// in statement order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelChoices {
    /// Every buffer the kernel allocates, with its layout.
    pub layouts: Vec<(Handle<ir::Buffer>, BufferLayout)>,
    /// Every `T.Pipelined` loop of the kernel, by its variable, with its
    /// schedule.
    pub schedules: Vec<(Handle<ir::Var>, PipelineSchedule)>,
}

impl<'a> Lower<'a> {
    /// The layout this attempt gives `b`.
    fn layout_of(&self, b: Handle<ir::Buffer>) -> BufferLayout {
        if let Some(r) = self.resident.get(&b) {
            let atom = r.plan.atom.name.clone();
            return match r.form {
                super::infer::Form::Tile => BufferLayout::Fragment { atom },
                super::infer::Form::Rows => BufferLayout::Rows { atom },
            };
        }
        if self.private.contains_key(&b) {
            return BufferLayout::Private;
        }
        if let Some(s) = self.spread.get(&b) {
            return BufferLayout::Spread {
                vector: s.v.max(1) as u64,
            };
        }
        if let Some(s) = self.swizzled.get(&b) {
            return BufferLayout::Swizzled {
                row_bytes: s.width as u64,
            };
        }
        if let Some(m) = self.mapped.get(&b) {
            return BufferLayout::Mapped { map: m.map.clone() };
        }
        match self.pitch.get(&b) {
            Some(&pitch) => BufferLayout::Padded {
                pitch: pitch as u64,
            },
            None => BufferLayout::Shared,
        }
    }

    /// The schedule this attempt gives the pipelined loop over `var`.
    fn schedule_of(&self, var: Handle<ir::Var>) -> PipelineSchedule {
        match self.pipelines.get(&var) {
            None => PipelineSchedule::Serial,
            Some(plan) if plan.tma.is_some() => PipelineSchedule::Bulk {
                stages: plan.stages as u32,
                specialized: Some(self.specialized || self.ws.is_some()),
            },
            Some(plan) if plan.asynchronous => PipelineSchedule::Async {
                stages: plan.stages as u32,
            },
            Some(_) => PipelineSchedule::Registers,
        }
    }

    /// What this (successful) attempt chose for the kernel `body`.
    pub(super) fn choices(&self, body: &ir::Block) -> KernelChoices {
        let mut out = KernelChoices::default();
        body.walk(&mut |stmt, _| match stmt {
            ir::Stmt::Alloc { buffer, .. } => {
                out.layouts.push((*buffer, self.layout_of(*buffer)));
            }
            ir::Stmt::For {
                var,
                kind: LoopKind::Pipelined { .. },
                ..
            } => out.schedules.push((*var, self.schedule_of(*var))),
            _ => {}
        });
        out
    }

    /// Applies the pinned paddings, after `pad.rs` chose its own.
    pub(super) fn pin_paddings(&mut self) -> Result<()> {
        let pins: Vec<(Handle<ir::Buffer>, BufferLayout)> = self
            .pins
            .layouts
            .iter()
            .map(|(&b, l)| (b, l.clone()))
            .collect();
        for (b, layout) in pins {
            match layout {
                BufferLayout::Padded { pitch } => {
                    let buffer = &self.f.buffers[b];
                    let bytes = buffer.dtype.bytes();
                    let row = self
                        .f
                        .const_shape(b)
                        .and_then(|s| s.last().copied())
                        .unwrap_or(i64::MAX);
                    let pitch = i64::try_from(pitch).unwrap_or(i64::MAX);
                    // Every element index of the padded buffer fits `i32`
                    // (as for any shared buffer).
                    let rows: Option<i64> = self.f.const_shape(b).map_or(Some(1), |s| {
                        s[..s.len().saturating_sub(1)]
                            .iter()
                            .try_fold(1i64, |n, &d| n.checked_mul(d))
                    });
                    let too_large = rows
                        .and_then(|r| r.checked_mul(pitch))
                        .is_none_or(|n| i32::try_from(n).is_err());
                    if too_large {
                        return Err(self.pin_error(
                            b,
                            format!(
                                "is pinned to layout `padded({pitch})`, which makes it larger \
                                 than 2^31 elements"
                            ),
                        ));
                    }
                    if pitch < row || !(pitch as u64).saturating_mul(bytes).is_multiple_of(16) {
                        return Err(self.pin_error(
                            b,
                            format!(
                                "is pinned to layout `padded({pitch})`, but rows must be at \
                                 least {row} elements apart and a whole number of 16-byte units"
                            ),
                        ));
                    }
                    self.pitch.insert(b, pitch);
                }
                _ => {
                    self.pitch.remove(&b);
                }
            }
        }
        Ok(())
    }

    /// Checks that this attempt realizes every pinned layout and schedule.
    pub(super) fn check_pins(&self) -> Result<()> {
        let mut layouts: Vec<_> = self.pins.layouts.iter().collect();
        layouts.sort_by_key(|(b, _)| **b);
        for (&b, want) in layouts {
            let got = self.layout_of(b);
            if got != *want {
                return Err(self.pin_error(
                    b,
                    format!(
                        "is pinned to layout `{want}`, which the lowering cannot realize here \
                         (it could give it `{got}`)"
                    ),
                ));
            }
        }
        let mut schedules: Vec<_> = self.pins.schedules.iter().collect();
        schedules.sort_by_key(|(v, _)| **v);
        for (&var, want) in schedules {
            let got = self.schedule_of(var);
            let agrees = match (want, got) {
                (
                    PipelineSchedule::Bulk {
                        stages: a,
                        specialized: None,
                    },
                    PipelineSchedule::Bulk { stages: b, .. },
                ) => *a == b,
                _ => *want == got,
            };
            if !agrees {
                let name = &self.f.vars[var].name;
                return Err(super::LowerError::Pin {
                    message: format!(
                        "the loop over `{name}` is pinned to schedule `{want}`, which the \
                         lowering cannot realize here (it could give it `{got}`)"
                    ),
                    span: self.pins.loop_spans.get(&var).copied().unwrap_or(self.span),
                });
            }
        }
        Ok(())
    }

    pub(super) fn pin_error(&self, b: Handle<ir::Buffer>, what: String) -> super::LowerError {
        let name = &self.f.buffers[b].name;
        let span = self
            .f
            .buffer_spans
            .get(b.index())
            .copied()
            .unwrap_or(self.span);
        super::LowerError::Pin {
            message: format!("buffer `{name}` {what}"),
            span,
        }
    }
}
