import ListTapeInvestigate
import ListTapeJSON
import ListTapeStore

#if canImport(Glibc)
import Glibc
#endif

/// `record --listen`: front ends connect to a Unix domain socket and stream JSON Lines.
///
/// Policy: any number of clients at once, all written into the one log in arrival order.
/// A line is recorded when its `\n` arrives, never before, so lines of different clients
/// interleave but never mix; each client has its own line numbers. One thread runs a
/// `poll(2)` loop over the listening socket, the clients and a signal pipe, and records
/// on that thread, so arrival order is the order lines are taken out of the kernel.
enum ListenSession {
  /// Signals that end the session.
  static let stopSignals = [SIGINT, SIGTERM]
  /// Bytes read from one client per turn of the loop, so a busy client cannot starve others.
  static let chunkSize = 64 * 1024

  /// Whether an unfinished line holds only blanks (nothing lost when it is dropped).
  static func isBlank(_ line: LineReader.Line) -> Bool {
    if case .text(_, let bytes) = line { return LineRecorder.isBlank(bytes) }
    return false
  }

  /// One connected front end.
  struct Client {
    let number: Int
    let descriptor: Int32
    var splitter = LineSplitter()
  }

  /// Runs until SIGINT/SIGTERM or, with `once`, until the client it records (the first to
  /// send a byte) disconnects; returns how many clients connected. Throws when the log
  /// fails; every line received before that is recorded.
  static func run(listener: Listener, once: Bool, lines: inout LineRecorder)
    throws(CLIError) -> Int
  {
    #if canImport(Glibc)
    SignalPipe.install(stopSignals, resetAfterFirst: stopSignals)
    defer {
      SignalPipe.uninstall(stopSignals)
      listener.close()
    }
    Diagnostics.line(
      "listtape: listening on \(listener.path)"
        + (once ? " for one client" : " (stop with Ctrl-C or SIGTERM)"))
    var session = State(listener: listener, once: once)
    defer { session.closeAll() }
    try session.loop(&lines)
    return session.connected
    #else
    return 0
    #endif
  }

  #if canImport(Glibc)
  /// The loop's state: the listener, the clients, and whether it is winding down.
  struct State {
    let listener: Listener
    let once: Bool
    var clients: [Client] = []
    var connected = 0
    /// With `once`: the client being recorded, the first to send a byte. A connection that
    /// closes without sending anything (another recorder checking whether the socket is
    /// live) does not count.
    var chosen: Int?
    var buffer = [UInt8](repeating: 0, count: ListenSession.chunkSize)

    init(listener: Listener, once: Bool) {
      self.listener = listener
      self.once = once
    }

    mutating func loop(_ lines: inout LineRecorder) throws(CLIError) {
      while true {
        var fds = [pollfd(fd: SignalPipe.descriptor, events: Int16(POLLIN), revents: 0)]
        if listener.descriptor >= 0 {
          fds.append(pollfd(fd: listener.descriptor, events: Int16(POLLIN), revents: 0))
        }
        let firstClient = fds.count
        for c in clients { fds.append(pollfd(fd: c.descriptor, events: Int16(POLLIN), revents: 0)) }
        let ready = poll(&fds, nfds_t(fds.count), -1)
        if ready < 0 {
          if errno == EINTR { continue }
          throw .failure("waiting for clients: \(Listener.systemError())", code: ExitCode.io)
        }
        if fds[0].revents != 0 && !SignalPipe.take().isEmpty {
          lines.interrupted = true
          try drain(&lines)
          return
        }
        // Clients first, in connection order, one read each; then new connections.
        var ended: [Int] = []
        for (i, slot) in zip(clients.indices, fds[firstClient...]) where slot.revents != 0 {
          if try read(client: i, &lines) == .ended { ended.append(i) }
        }
        for i in ended.reversed() {
          let client = clients.remove(at: i)
          disconnect(client, &lines)
          if once && client.number == chosen { return }
        }
        if once, let chosen {
          // Nobody else joins a --once session; silent connections are let go.
          listener.close()
          for client in clients where client.number != chosen { disconnect(client, &lines) }
          clients.removeAll { $0.number != chosen }
        }
        if firstClient > 1 && fds[1].revents != 0 { acceptPending() }
      }
    }

    /// Accepts every waiting connection.
    mutating func acceptPending() {
      while listener.descriptor >= 0, let fd = listener.accept() {
        connected += 1
        clients.append(Client(number: connected, descriptor: fd))
        Diagnostics.line("listtape: client \(connected) connected")
      }
    }

    /// What one read from a client gave.
    enum ReadResult {
      case data, nothingYet, ended
    }

    /// Reads once from a client (without waiting unless `wait`) and records its complete
    /// lines.
    mutating func read(client i: Int, _ lines: inout LineRecorder, wait: Bool = true)
      throws(CLIError) -> ReadResult
    {
      let fd = clients[i].descriptor
      if once, let chosen, chosen != clients[i].number { return .ended }
      var n: Int
      repeat {
        n = buffer.withUnsafeMutableBytes { raw in
          guard let base = raw.baseAddress else { return 0 }
          return recv(fd, base, raw.count, wait ? 0 : Int32(MSG_DONTWAIT))
        }
      } while n < 0 && errno == EINTR
      if n < 0 {
        if errno == EAGAIN || errno == EWOULDBLOCK { return .nothingYet }
        Diagnostics.line(
          "listtape: client \(clients[i].number): read failed: \(Listener.systemError())")
        return .ended
      }
      if n == 0 { return .ended }
      if once && chosen == nil { chosen = clients[i].number }
      buffer.withUnsafeBytes { raw in
        clients[i].splitter.append(UnsafeRawBufferPointer(rebasing: raw[..<n]))
      }
      let number = clients[i].number
      while let line = clients[i].splitter.next() {
        let place = "client \(number), line \(line.number)"
        do {
          try lines.take(line, at: place, origin: place)
        } catch {
          throw CLIError(error)
        }
      }
      return .data
    }

    /// Reports a line left unfinished, then closes the connection.
    mutating func disconnect(_ client: Client, _ lines: inout LineRecorder) {
      var client = client
      let length = client.splitter.pendingLength
      if let line = client.splitter.finish(), !ListenSession.isBlank(line) {
        let number = line.number
        lines.reject(
          "incomplete line at disconnect (\(Render.plural(length, "byte")), no newline); "
            + "not recorded",
          at: "client \(client.number), line \(number)")
      }
      close(client.descriptor)
      Diagnostics.line(
        "listtape: client \(client.number) disconnected after "
          + Render.plural(client.splitter.lines, "line"))
    }

    /// On a signal: records everything already received (connections still waiting to be
    /// accepted included), then closes every client.
    mutating func drain(_ lines: inout LineRecorder) throws(CLIError) {
      acceptPending()
      listener.close()
      for i in clients.indices {
        while try read(client: i, &lines, wait: false) == .data {}
      }
      closeAll(lines: &lines)
    }

    mutating func closeAll(lines: inout LineRecorder) {
      for client in clients { disconnect(client, &lines) }
      clients.removeAll()
    }

    /// Closes what is left without reporting (after a failure).
    mutating func closeAll() {
      for client in clients { close(client.descriptor) }
      clients.removeAll()
    }
  }
  #endif
}
