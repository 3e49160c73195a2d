import Capture
import CaptureControl
import CaptureMQTT
import Foundation
import PipelineFile

/// `--events mqtt://HOST[:PORT]/PREFIX` and the options mosquitto_pub users know, shared by `capture run`
/// and `capture serve`.
enum MQTTArguments {
    static let options: Set<String> = ["events", "mqtt-user", "mqtt-password-file", "mqtt-cafile", "mqtt-capath", "mqtt-cert", "mqtt-key", "mqtt-id"]
    static let flags: Set<String> = ["mqtt-insecure"]

    static let help = """
          --events URL      publish every event as JSON on PREFIX/EVENT of an MQTT broker and take commands
                            (.pipeline actions) on PREFIX/command, answered on PREFIX/reply; PREFIX/available
                            is online/offline (retained, offline also the last will). URL: mqtt://HOST[:PORT]/PREFIX
                            or mqtts:// (TLS). A broker that is down or goes away is retried; the run goes on
          --mqtt-user U, --mqtt-password-file F   credentials (the password is the file's first line)
          --mqtt-cafile F, --mqtt-capath D        trust these CAs (turns TLS on); --mqtt-cert F --mqtt-key F
                            a client certificate; --mqtt-insecure skips the host name check; --mqtt-id ID
        """

    struct Parsed {
        var url: MQTTURL
        var options: MQTTOptions
    }

    static func parse(_ parsed: Arguments) throws(Arguments.UsageError) -> Parsed? {
        guard let text = parsed.value("events") else {
            if let stray = (options.subtracting(["events"]).first { parsed.value($0) != nil }) ?? (parsed.flag("mqtt-insecure") ? "mqtt-insecure" : nil) {
                throw Arguments.UsageError(description: "--\(stray) needs --events mqtt://HOST/PREFIX")
            }
            return nil
        }
        let url: MQTTURL
        do throws(CaptureError) { url = try MQTTURL(text) } catch { throw Arguments.UsageError(description: "--events: \(error.description)") }
        return Parsed(
            url: url,
            options: MQTTOptions(
                user: parsed.value("mqtt-user"), passwordFile: parsed.value("mqtt-password-file"),
                caFile: parsed.value("mqtt-cafile"), caPath: parsed.value("mqtt-capath"),
                certFile: parsed.value("mqtt-cert"), keyFile: parsed.value("mqtt-key"),
                insecure: parsed.flag("mqtt-insecure"), clientID: parsed.value("mqtt-id")))
    }

    /// Starts the publisher of a run: events as they come, commands through the runner; the broker's
    /// comings and goings on stderr. Typed error: `invalidMqttOptions`.
    static func start(_ parsed: Parsed, runner: ScenarioRunner) throws(CaptureError) -> MQTTEventPublisher {
        let publisher = try MQTTEventPublisher(url: parsed.url, options: parsed.options) { status in
            switch status {
            case .connected(let broker):
                printError("mqtt: connected to \(broker), events on \(parsed.url.prefix)/EVENT")
            case .disconnected(let broker, let reason, let retryIn):
                printError("mqtt: \(broker): \(reason); trying again in \(String(format: "%g", retryIn)) s")
            }
        }
        publisher.start()
        publisher.performCommands(reading: .pipelineAction(document: runner.document), with: { runner.controller })
        return publisher
    }
}

/// What remote commands (the MQTT command topic, `capture serve`'s API) may name beyond the output
/// folder: `--allow-stream URL` and `--allow-input FILE`, shared by `capture run` and `capture serve`.
enum RemoteAccessArguments {
    static let options: Set<String> = ["allow-stream", "allow-input"]

    static let help = """
          --allow-stream URL  a stream remote commands may add (add-output, kind=stream, serve= or publish= this
                            URL); repeatable. Without it they add no stream
          --allow-input FILE  a file remote commands may read (trim-video, generate-thumbnail, an overlay's image, a
                            file: input) besides the output folder's own regular files; repeatable
        """

    /// The policy; `album` when the served gallery lists the album (remote callers may then read it
    /// and save into it).
    static func parse(_ parsed: Arguments, album: MediaLibrary? = nil) throws(Arguments.UsageError) -> RemoteAccess {
        var urls: [StreamURL] = []
        for text in parsed.all("allow-stream") {
            do throws(CaptureError) { urls.append(try StreamURL(text)) } catch {
                throw Arguments.UsageError(description: "--allow-stream: \(error.description)")
            }
        }
        let current = FileManager.default.currentDirectoryPath
        let files = parsed.all("allow-input").map { $0.hasPrefix("/") ? $0 : (current as NSString).appendingPathComponent($0) }
        return RemoteAccess(album: album, inputFiles: files, streamURLs: urls)
    }
}
