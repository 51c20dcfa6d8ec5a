// libFuzzer target for the command-line tokenizer: compiled with
// Sources/ForumCLI/Input/CommandWords.swift by Scripts/fuzz.sh. Every word must keep the rest
// of the line byte for byte, and only the last word may have an unclosed quote.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTokenizer(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  guard let line = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  else { return 0 }
  let command = CommandWords(line: line)
  for (index, word) in command.words.enumerated() {
    guard line.hasSuffix(word.rest) else { fatalError("a word's rest is not the line's end") }
    if word.value == nil && index != command.words.count - 1 {
      fatalError("an unclosed quote before the last word")
    }
  }
  _ = command.roughWords
  return 0
}
