import Datastore
import Forum

/// Text pasted into a room is text: a pasted line that starts with `/` is posted, never run as
/// a command, and a paste of several lines asks once how to send them (one message, one each,
/// or none) instead of posting a burst nobody meant.
extension ChatRoom {
  func postPaste(first: String) throws {
    let editor = session.input as? LineEditor
    var lines = [first]
    for bytes in editor?.takePastedLines() ?? [] {
      lines.append(try decodeUTF8(bytes, field: "line"))
    }
    // Blank lines at the ends of a paste are not part of what was meant.
    while lines.last?.allSatisfy({ $0 == " " || $0 == "\t" }) == true { lines.removeLast() }
    while lines.first?.allSatisfy({ $0 == " " || $0 == "\t" }) == true { lines.removeFirst() }
    guard !lines.isEmpty else { return }
    if lines.count == 1 {
      send([lines[0]])
      return
    }
    let messages = session.messages
    print(session.style.dim(messages.pastedLines(lines.count)))
    for line in lines.prefix(3) {
      print(session.style.dim("  " + SafeText.truncate(SafeText.sanitize(line), to: 70)))
    }
    if lines.count > 3 { print(session.style.dim("  …")) }
    while true {
      let event = session.input.readLine(
        prompt: messages.pasteQuestion(lines.count), history: false, completion: .none)
      guard case .line(let bytes) = event else {
        print(messages.pasteCancelled)
        return
      }
      let answer = String(decoding: bytes, as: UTF8.self).trimmingSpaces().lowercased()
      switch answer {
      case "1", "o", "one":
        send([lines.joined(separator: "\n")])
        return
      case String(lines.count), "e", "each":
        send(lines.filter { !$0.allSatisfy({ $0 == " " || $0 == "\t" }) })
        return
      case "c", "cancel", "n", "no":
        print(messages.pasteCancelled)
        return
      default:
        continue  // anything else asks again: a paste is never lost to a stray key
      }
    }
  }

  /// Posts each text as typed (a leading `/` included); the first failure stops the rest.
  private func send(_ texts: [String]) {
    for text in texts {
      do {
        try source.post(text)
        if source.className == Board.commentClassName { session.sayWhomMentionsMiss(text) }
      } catch {
        report(error)
        return
      }
    }
  }
}
