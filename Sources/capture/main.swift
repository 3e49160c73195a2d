import CaptureCLI

// The `capture` command, the binary that ships: its commands are in CaptureCLI (argument parsing and
// printing only; the work is done by the libraries). `bench` and `soak` run in the developer executable,
// `capture-dev`, which this binary hands them to; it links no benchmark, fuzzer or test fixture.
await CommandLineTool.main()
