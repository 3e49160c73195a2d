// The controller a runner hands out (`ScenarioRunner.controller`) and its commands are part of what a
// `.pipeline` user works with: `import PipelineFile` sees them.
@_exported import CaptureControl
