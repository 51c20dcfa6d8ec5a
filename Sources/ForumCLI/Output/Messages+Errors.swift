import Datastore

/// A failure's sentence: the catalogue's (`ErrorCode.sentence`, in Refusals), in the reader's
/// language. No command words a refusal of its own; nothing is read back out of words.
extension Messages {
  func failure(_ error: DatastoreError) -> String { error.wording.text(japanese: japanese) }
}
