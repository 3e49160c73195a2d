import Foundation
import Testing

/// scripts/check-doc-comments.py, the check behind `make check-docs`: it fails on a planted public
/// symbol without a doc comment, naming it, and passes once the symbol is documented.
@Suite struct DocCommentCheckTests {
    static func checkModule(_ source: String, in scratch: Scratch) throws -> (status: Int32, output: String) {
        try scratch.write("Planted.swift", source)
        let graphs = scratch.file("graphs")
        try FileManager.default.createDirectory(atPath: graphs, withIntermediateDirectories: true)
        let compiled = try tool([
            "swiftc", "-parse-as-library", "-emit-module", "-module-name", "Planted", "-emit-module-path", scratch.file("Planted.swiftmodule"),
            "-emit-symbol-graph", "-emit-symbol-graph-dir", graphs, scratch.file("Planted.swift"),
        ])
        #expect(compiled.status == 0, "\(compiled.output)")
        return try tool(["/usr/bin/python3", packageRoot + "/scripts/check-doc-comments.py", graphs, "Planted"])
    }

    @Test func anUndocumentedPublicSymbolFailsTheCheckByName() throws {
        let scratch = try Scratch()
        let planted = """
            /// A documented type.
            public struct Documented {
                /// A documented property.
                public var size = 1
                public func undocumentedMethod() {}
            }
            public enum Undocumented { case one }
            """
        let failing = try Self.checkModule(planted, in: scratch)
        #expect(failing.status == 1)
        #expect(failing.output.contains("Planted.swift:5: instance method Documented.undocumentedMethod() has no doc comment"), "\(failing.output)")
        #expect(failing.output.contains("Undocumented has no doc comment") && failing.output.contains("Undocumented.one has no doc comment"))
        #expect(!failing.output.contains("Documented.size"))
        let documented = planted.replacingOccurrences(of: "    public func", with: "    /// A method.\n    public func")
            .replacingOccurrences(
                of: "public enum Undocumented { case one }", with: "/// An enum.\npublic enum Undocumented {\n    /// Its case.\n    case one\n}")
        let passing = try Self.checkModule(documented, in: scratch)
        #expect(passing.status == 0, "\(passing.output)")
    }
}
