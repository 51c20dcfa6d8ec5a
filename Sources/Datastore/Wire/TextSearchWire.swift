/// `TextSearch` on the wire.
extension TextSearch {
  public var wire: JSONValue {
    .object([
      "terms": .strings(terms),
      "targets": .array(
        targets.map {
          .object(["className": .string($0.className), "equalTo": .object($0.equalTo)])
        }),
      "limit": .int(Int64(limit)), "skip": .int(Int64(skip)),
    ])
  }

  public init(wire value: JSONValue) throws {
    let object = try WireObject(value, "search")
    let targets = try object.array("targets").map { target in
      let fields = try WireObject(target, "search.target")
      return Target(
        className: try fields.string("className"), equalTo: try fields.object("equalTo"))
    }
    self.init(
      terms: try object.strings("terms"), targets: targets, limit: try object.count("limit"),
      skip: try object.count("skip"))
  }
}
