extension CaptureWebServer {
    /// The session `capture serve` runs without a file: the text of `Pipelines/serve.pipeline` (a test
    /// keeps the two the same).
    public static let defaultPipeline = """
        # What `capture serve` runs without a file: the first camera (the test pattern, said on stderr, when there is none),
        # photos and codes. The web previews are outputs the server adds while someone watches, and video
        # mode adds a movie output (docs/serve.md). Files go to --output-dir (default ./capture-media).
        session, preset=hd1280x720
        input, name=camera, device=default, fallback=test-pattern
        output, name=photo, kind=photo, codec=jpeg, quality=90, location="IMG_%04d.jpg"
        output, name=codes, kind=metadata

        """
}
