//! `tilec check`: run the front end and the verifier, report diagnostics.
//! `--plugin` files are loaded too, so that a command line that names a
//! broken plugin fails here as it would in `compile`.

use crate::backends::Plugins;
use crate::cli::CheckArgs;
use crate::commands::{Context, Exit, Frontend, print_stdout};
use crate::json;

pub fn run(args: &CheckArgs, cx: &Context) -> Exit {
    let plugin_failures = Plugins::load(&args.plugins.paths, false).explicit_failures();
    let frontend = Frontend::load(&args.source, args.target.as_deref());
    let ok = frontend.succeeded() && plugin_failures.is_empty();
    if args.json {
        let mut diagnostics: Vec<json::Diagnostic> = plugin_failures
            .iter()
            .map(|r| json::diagnostic(r, &frontend.file, None))
            .collect();
        diagnostics.extend(frontend.json_diagnostics());
        let output = json::CheckOutput { ok, diagnostics };
        print_stdout(&(json::to_line(&output) + "\n"));
    } else {
        for report in &plugin_failures {
            eprint!("{}", cx.renderer.render(report, None));
        }
        eprint!("{}", frontend.render(&cx.renderer));
        if ok {
            let kernels: Vec<String> = frontend
                .module
                .iter()
                .flat_map(|m| &m.functions)
                .map(|f| format!("`{}`", f.name))
                .collect();
            eprintln!("{}: ok (kernel {})", frontend.file, kernels.join(", "));
        }
    }
    if ok { Exit::Success } else { Exit::Error }
}
