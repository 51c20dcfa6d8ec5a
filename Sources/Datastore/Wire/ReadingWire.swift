/// What `ReadingEngine` answers, on the wire: read positions and revisions.
extension UnreadState {
  public var wire: JSONValue {
    .object([
      "position": position.map(JSONValue.int) ?? .null,
      "unreadChildren": .int(Int64(unreadChildren)),
    ])
  }

  public init(wire value: JSONValue) throws {
    let object = try WireObject(value, "unread")
    self.init(
      position: try object.optionalInt("position"),
      unreadChildren: try object.count("unreadChildren"))
  }
}

extension RevisionPage {
  public var wire: JSONValue {
    .object([
      "revisions": .array(
        revisions.map {
          .object([
            "number": .int(Int64($0.number)), "date": .int($0.date), "fields": .object($0.fields),
          ])
        }),
      "count": .int(Int64(count)), "lastNumber": .int(Int64(lastNumber)),
    ])
  }

  public init(wire value: JSONValue) throws {
    let object = try WireObject(value, "revisions")
    self.init(
      revisions: try object.array("revisions").map {
        let revision = try WireObject($0, "revision")
        return Revision(
          number: try revision.count("number"), date: try revision.int("date"),
          fields: try revision.object("fields"))
      }, count: try object.count("count"), lastNumber: try object.count("lastNumber"))
  }
}

extension Principals {
  /// The user and roles of a session (never the master's).
  public var wire: JSONValue {
    .object([
      "userId": userId.map(JSONValue.string) ?? .null,
      "roles": .strings(
        names.filter { $0.hasPrefix("role:") }.map { String($0.dropFirst(5)) }.sorted()),
    ])
  }

  public init(wire value: JSONValue) throws {
    let object = try WireObject(value, "principals")
    let userId = try object.optionalString("userId")
    let roles = try object.strings("roles")
    guard userId.map(Validation.isObjectId) ?? true, roles.allSatisfy(Validation.isRoleName) else {
      throw Wire.malformed("principals")
    }
    self.init(userId: userId, roles: roles)
  }
}
