// libFuzzer target for the command-line grammar's word splitter: compiled with
// Sources/ForumCLI/Input/CommandWords.swift by Scripts/fuzz.sh.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommandWords(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  guard let line = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  else { return 0 }
  let words = CommandWords(line: line)
  // Every word keeps the untouched tail of the line, so prose can be taken byte for byte.
  for word in words.words where !line.hasSuffix(word.rest) { fatalError("rest is not a tail") }
  _ = words.roughWords
  return 0
}
