/// How an engine builds the objects of one answer from their stored text: only the fields asked
/// for (`Query.keys`), and no more than the answer's budget (`Query.costBudget`), each row
/// weighed before it is built. One per answer; both SQL engines decode rows through it.
final class ObjectReading {
  let keys: Set<String>?
  private let budget: Int?
  private var spent = 0

  init(keys: Set<String>? = nil, budget: Int? = nil) {
    self.keys = keys
    self.budget = budget
  }

  /// A row's fields, and whether any of it could not be read (`JSONValue.storedFields`).
  func fields(_ text: String) throws -> (fields: [String: JSONValue], damaged: Bool) {
    if let budget {
      spent += JSONValue.readingCost(text)
      guard spent <= budget else {
        throw DatastoreError(
          .invalid, field: "limit", reason: StoreReason.answerTooLarge(budget: budget))
      }
    }
    return JSONValue.storedFields(text, keys: keys)
  }
}
