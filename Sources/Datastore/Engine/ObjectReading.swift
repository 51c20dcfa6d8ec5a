/// How an engine builds the objects of one answer from their stored text: only the fields asked
/// for (`Query.keys`), and no more than the answer's budget (`Query.costBudget`). The engines
/// weigh every row of an answer (`weigh`) before they build any (`build`), so an answer past
/// its budget is refused having built nothing: a reader who asks for too much over and over
/// costs the server a scan of the text, not the objects (issue 28 H5). One per answer.
final class ObjectReading {
  let keys: Set<String>?
  private let budget: Int?
  private var spent = 0

  init(keys: Set<String>? = nil, budget: Int? = nil) {
    self.keys = keys
    self.budget = budget
  }

  /// Counts a row's stored text toward the budget; `E400002` on `limit` past it.
  func weigh(_ text: String) throws {
    guard let budget else { return }
    spent += JSONValue.readingCost(text)
    guard spent <= budget else {
      throw DatastoreError(
        .invalid, field: "limit", reason: StoreReason.answerTooLarge(budget: budget))
    }
  }

  /// A weighed row's fields, and whether any of it could not be read
  /// (`JSONValue.storedFields`).
  func build(_ text: String) -> (fields: [String: JSONValue], damaged: Bool) {
    JSONValue.storedFields(text, keys: keys)
  }
}
