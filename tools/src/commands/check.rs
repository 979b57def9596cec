//! `tilec check`: run the front end and the verifier, report diagnostics.

use crate::cli::CheckArgs;
use crate::commands::{Context, Exit, Frontend, print_stdout};
use crate::json;

pub fn run(args: &CheckArgs, cx: &Context) -> Exit {
    let frontend = Frontend::load(&args.source);
    let ok = frontend.succeeded();
    if args.json {
        let output = json::CheckOutput {
            ok,
            diagnostics: frontend.json_diagnostics(),
        };
        print_stdout(&(json::to_line(&output) + "\n"));
    } else {
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
