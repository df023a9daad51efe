//! The pass pipeline: a straight-line list of [`Pass`]es run in order, with an observer that
//! sees the function after every stage and, on request, validation between stages.
//!
//! Stages, in order, are `parsed` (the input), one per pass (`fused`, `dce` in the default
//! pipeline), and `optimized` (the final function, the same value as the last pass's output).

use rextio_ir::{Diagnostic, Function};

use crate::dce::Dce;
use crate::fuse::Fuse;
use crate::pass::Pass;
use crate::validate::validate;

/// Stage name of the pipeline's input.
pub const STAGE_PARSED: &str = "parsed";
/// Stage name of the pipeline's output.
pub const STAGE_OPTIMIZED: &str = "optimized";

/// The function after each stage, in stage order.
pub type Dumps = Vec<(&'static str, Function)>;

pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
    validate_between: bool,
}

/// The optimizer every consumer runs: fusion, then dead-code elimination.
pub fn default_pipeline() -> Pipeline {
    Pipeline::new().with_pass(Fuse::default()).with_pass(Dce)
}

impl Default for Pipeline {
    fn default() -> Pipeline {
        Pipeline::new()
    }
}

impl Pipeline {
    /// An empty pipeline (it returns its input unchanged).
    pub fn new() -> Pipeline {
        Pipeline {
            passes: Vec::new(),
            validate_between: false,
        }
    }

    pub fn with_pass(mut self, pass: impl Pass + 'static) -> Pipeline {
        self.passes.push(Box::new(pass));
        self
    }

    /// Validates the input and the output of every pass; a failure is reported with the
    /// stage that produced the invalid function.
    pub fn validating(mut self, on: bool) -> Pipeline {
        self.validate_between = on;
        self
    }

    /// Every stage name in order, `parsed` first and `optimized` last.
    pub fn stage_names(&self) -> Vec<&'static str> {
        let mut names = vec![STAGE_PARSED];
        names.extend(self.passes.iter().map(|pass| pass.name()));
        names.push(STAGE_OPTIMIZED);
        names
    }

    /// Runs every pass in order; `observe(stage, function)` sees the function after each stage.
    pub fn run(
        &self,
        f: Function,
        observe: &mut dyn FnMut(&'static str, &Function),
    ) -> Result<Function, Vec<Diagnostic>> {
        self.check(STAGE_PARSED, &f)?;
        observe(STAGE_PARSED, &f);
        let mut f = f;
        for pass in &self.passes {
            f = pass
                .run(f)
                .map_err(|errors| blame(errors, pass.name(), "failed"))?;
            self.check(pass.name(), &f)?;
            observe(pass.name(), &f);
        }
        observe(STAGE_OPTIMIZED, &f);
        Ok(f)
    }

    /// Runs the pipeline and returns the final function with a dump of every stage.
    pub fn run_with_dumps(&self, f: Function) -> Result<(Function, Dumps), Vec<Diagnostic>> {
        let mut dumps = Vec::new();
        let out = self.run(f, &mut |stage, f| dumps.push((stage, f.clone())))?;
        Ok((out, dumps))
    }

    fn check(&self, stage: &'static str, f: &Function) -> Result<(), Vec<Diagnostic>> {
        if self.validate_between {
            let what = if stage == STAGE_PARSED {
                "got invalid input"
            } else {
                "produced invalid IR"
            };
            validate(f).map_err(|errors| blame(errors, stage, what))?;
        }
        Ok(())
    }
}

fn blame(errors: Vec<Diagnostic>, stage: &str, what: &str) -> Vec<Diagnostic> {
    errors
        .into_iter()
        .map(|d| d.with_note(format!("pipeline stage `{stage}` {what}")))
        .collect()
}
