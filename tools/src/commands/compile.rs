//! `tilec compile`: compile a kernel file and write the result.

use std::io::Write as _;
use std::path::Path;

use tilec_core::text::print_module;

use crate::cli::{CompileArgs, Emit};
use crate::commands::{Context, Exit, Frontend, check_backend, io_reason};
use crate::diagnostics::Report;

pub fn run(args: &CompileArgs, cx: &Context) -> Exit {
    if let Err(report) = check_backend(&args.backend) {
        eprint!("{}", cx.renderer.render(&report, None));
        return Exit::Error;
    }
    let frontend = Frontend::load(&args.source);
    eprint!("{}", frontend.render(&cx.renderer));
    let Some(module) = frontend.module.as_ref().filter(|_| frontend.succeeded()) else {
        return Exit::Error;
    };
    let text = match args.emit {
        Emit::TileIr => print_module(module),
    };
    if let Err(report) = write_output(&args.output, &text) {
        eprint!("{}", cx.renderer.render(&report, None));
        return Exit::Error;
    }
    Exit::Success
}

/// Writes `text` to `path`, or to standard output for `-`.
fn write_output(path: &Path, text: &str) -> Result<(), Report> {
    let result = if path == Path::new("-") {
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
    } else {
        std::fs::write(path, text)
    };
    // A reader that went away (`tilec compile k.py | head`) is not an error.
    let result = match result {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe && path == Path::new("-") => Ok(()),
        other => other,
    };
    result.map_err(|e| {
        let target = if path == Path::new("-") {
            "standard output".to_string()
        } else {
            format!("`{}`", path.display())
        };
        Report::error(format!("cannot write {target}: {}", io_reason(&e)))
    })
}
