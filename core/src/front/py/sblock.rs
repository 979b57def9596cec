//! `with T.sblock("name"):` — a TIR block without iteration variables (TVM's
//! `T.block`, renamed `T.sblock` in TileLang's TVM): a named scope whose
//! body runs where it stands. Its `T.reads(...)` / `T.writes(...)` declare
//! the regions the body touches for TVM's scheduling passes and change
//! nothing that is computed. The scope matters to TileLang in one place:
//! a `T.annotate_safe_value` inside it applies to the loads of that block
//! only (`safe_value.rs`).
//!
//! Blocks with iteration variables (`T.axis.spatial(...)` inside the block)
//! are TVM's scheduling input; `T.axis` is not part of tilec's vocabulary.

use super::codes;
use super::eval::{Evaluator, err};
use super::tl::Args;
use super::value::{EResult, Value};
use crate::front::Diagnostic;
use crate::ir::Span;
use std::collections::HashMap;
use std::rc::Rc;

/// The context value `T.sblock(...)` returns.
const MARK: &str = "T.sblock scope";

/// Whether `v` is what `T.sblock(...)` returned.
pub(crate) fn is_sblock(v: &Value<'_>) -> bool {
    matches!(v, Value::Opaque(s) if &**s == MARK)
}

/// `T.sblock(name_hint="", no_realize=False)`.
pub(crate) fn open<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let a = Args::new("sblock", &["name_hint", "no_realize"], args, kwargs, span)?;
    if let Some(n) = a.get(0)
        && !matches!(n, Value::Str(_))
    {
        return Err(err(
            codes::TYPE_ERROR,
            format!(
                "the name of `T.sblock` must be a string, got {}",
                n.a_type_name()
            ),
            span,
        ));
    }
    ev.stager("`T.sblock`", span)?;
    Ok(Value::Opaque(Rc::from(MARK)))
}

/// `T.reads(...)` / `T.writes(...)`: inside a `T.sblock`, accepted and
/// dropped.
pub(crate) fn access_hint<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    if let Some((k, _)) = kwargs.first() {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("`T.{name}` has no parameter `{k}`"),
            span,
        ));
    }
    let st = ev.stager(&format!("`T.{name}`"), span)?;
    if st.sblock_depth == 0 {
        return Err(Box::new(
            Diagnostic::error(
                codes::PLACEMENT,
                format!("`T.{name}` must be inside a `with T.sblock(...)` block"),
                span,
            )
            .with_label("outside any block")
            .with_note(format!(
                "`T.{name}` declares the regions a TIR block touches; outside a block it means nothing: remove it"
            )),
        ));
    }
    Ok(Value::None)
}

/// What a block's end restores.
pub(crate) struct Saved {
    safe_values: HashMap<crate::ir::Handle<crate::ir::Buffer>, f64>,
    safe_mark: usize,
}

/// Opens a block's scope.
pub(crate) fn enter(ev: &mut Evaluator<'_>, span: Span) -> EResult<Saved> {
    let st = ev.stager("`T.sblock`", span)?;
    st.sblock_depth += 1;
    let saved = Saved {
        safe_values: st.safe_values.clone(),
        safe_mark: st.safe_mark,
    };
    super::safe_value::start_scope(st);
    Ok(saved)
}

/// Closes a block's scope: safe values annotated inside it end with it.
pub(crate) fn leave(ev: &mut Evaluator<'_>, saved: Saved, span: Span) -> EResult<()> {
    let st = ev.stager("`T.sblock`", span)?;
    st.sblock_depth = st.sblock_depth.saturating_sub(1);
    st.safe_values = saved.safe_values;
    st.safe_mark = saved.safe_mark;
    Ok(())
}
