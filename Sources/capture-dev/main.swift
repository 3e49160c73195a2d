import CaptureCLI

// `capture-dev`, the developer executable: every command of `capture`, and `bench` and `soak` (the
// benchmarks, the soak runs and the fuzzer, with their fixtures), which `capture` hands to it. It is
// never packaged; `capture` finds it next to its own binary.
await CommandLineTool.main(developerCommands: [
    "bench": { arguments in try await BenchCommand.run(arguments) },
    "soak": { arguments in try await SoakCommand.run(arguments) },
])
