/// Writes of several steps (`WriteOperation`), run whole by the engine.
extension DatastoreClient {
  /// Runs `operation` whole, as one write: one transaction on SQLite and PostgreSQL (one
  /// request on an engine across the network), every date from the engine's clock. A step that
  /// fails undoes every step before it and is `WriteOperationError`, saying which step.
  public func perform(_ operation: WriteOperation) throws -> WriteOutcome {
    try engine.perform(operation, for: self)
  }

  /// `perform` as a server runs an operation a client across the network sent: `checks` sees
  /// and may change (or refuse) each object and file a step writes, before it is written.
  @_spi(Server)
  public func perform(_ operation: WriteOperation, checking checks: StepChecks) throws
    -> WriteOutcome
  {
    stepChecks = checks
    defer { stepChecks = nil }
    return try engine.perform(operation, for: self)
  }

  /// The steps of `operation`, in the caller's transaction: what every engine's `perform` runs
  /// (a server, for an engine across the network). A failing step throws the step's own error
  /// (undone by the transaction, which may run it again on a serialization failure); `failed`
  /// says which step it was.
  func run(_ operation: WriteOperation, failed: inout Int) throws -> WriteOutcome {
    var outcome = WriteOutcome()
    var now: Int64?
    func resolve(_ operand: Operand) throws -> JSONValue {
      switch operand {
      case .value(let value): return value
      case .caller:
        guard let userId else { throw DatastoreError(.authentication) }
        return .pointer(className: User.className, objectId: userId)
      case .pointer(let step):
        let object = try found(step)
        return .pointer(className: object.className, objectId: object.objectId)
      case .field(let field, let step):
        guard let value = try found(step)[field] else { throw DatastoreError.invalid(field) }
        return value
      case .now:
        if now == nil { now = try engine.now() }
        return .int(now!)
      }
    }
    func resolve(_ fields: [String: Operand]) throws -> [String: JSONValue] {
      try fields.mapValues(resolve)
    }
    func found(_ step: Int) throws -> DataObject {
      guard step < outcome.results.count, let object = outcome.object(step) else {
        throw DatastoreError.invalid("step", "step \(step) found nothing")
      }
      return object
    }
    for (index, step) in operation.steps.enumerated() {
      failed = index
      let result: WriteOutcome.Result
      switch step {
      case .find(let className, let equalTo):
        let query = Query(className: className, equalTo: try resolve(equalTo), limit: 1)
        guard let object = try find(query).first else { throw DatastoreError(.notFound) }
        result = .objects([object])
      case .findAll(let className, let equalTo):
        result = .objects(
          try find(
            Query(
              className: className, equalTo: try resolve(equalTo), limit: Query.maximumLimit)))
      case .stopIf(let step, let field, let value):
        if outcome.objects(step).contains(where: { $0[field] == value }) {
          outcome.results.append(.none)
          outcome.stoppedAt = index
          return outcome
        }
        result = .none
      case .putFile(let name, let bytes, let mimeType, let acl):
        let file = try stepChecks?.file(name, bytes, mimeType) ?? (bytes: bytes, mimeType: mimeType)
        result = .file(
          try putFile(name: name, bytes: file.bytes, mimeType: file.mimeType, acl: acl))
      case .create(let className, let fields, let acl):
        let fields = try checked(className, try resolve(fields), nil)
        result = .objects([try create(className, fields: fields, acl: acl)])
      case .update(let step, let fields):
        let object = try found(step)
        try update(
          object.className, objectId: object.objectId,
          set: try checked(object.className, try resolve(fields), object.objectId))
        // Read back: the rules' bookkeeping (the edit date) may land after the update's row.
        result = .objects([try get(object.className, objectId: object.objectId)])
      case .keepOne(let step, let className, let fields, let creating, let acl):
        let objects = outcome.objects(step)
        if let first = objects.first {
          for extra in objects.dropFirst() {
            try delete(extra.className, objectId: extra.objectId)
          }
          let set = try checked(first.className, try resolve(fields), first.objectId)
          result = .objects([try update(first.className, objectId: first.objectId, set: set)])
        } else {
          let all = try resolve(creating).merging(try resolve(fields)) { _, set in set }
          result = .objects([
            try create(className, fields: try checked(className, all, nil), acl: acl)
          ])
        }
      case .deleteFound(let step, let conditions):
        for object in outcome.objects(step)
        where conditions.allSatisfy({ field, values in values.contains(object[field] ?? .null) }) {
          try delete(object.className, objectId: object.objectId)
        }
        result = .none
      case .requireEditable(let step):
        let object = try found(step)
        try checkNotTakenDown(object)
        guard let owner = store.rules.owner(of: object.className),
          let userId, object[owner.field]?.pointerId == userId
        else { throw DatastoreError(.noAccess) }
        result = .none
      case .remove(let step):
        let object = try found(step)
        try checkNotTakenDown(object)
        if let owner = store.rules.owner(of: object.className),
          let userId, object[owner.field]?.pointerId == userId
        {
          try delete(object.className, objectId: object.objectId)
          result = .removed(.deleted)
        } else if let rule = store.rules.moderationRule(of: object.className),
          principals.names.contains("role:" + rule.role), object.acl.readers.contains("*")
        {
          try moderate(object.className, objectId: object.objectId)
          result = .removed(.takenDown)
        } else {
          throw DatastoreError(.noAccess)
        }
      case .markRead(let step, let number):
        let object = try found(step)
        try markRead(object.className, objectId: object.objectId, upTo: number)
        result = .none
      case .advanceRead(let parentStep, let childStep):
        let parent = try found(parentStep)
        let child = try found(childStep)
        if let rule = store.rules.childRule(of: child.className),
          let number = child[rule.numberField]?.intValue
        {
          try advanceRead(parent.className, objectId: parent.objectId, to: number)
        }
        result = .none
      }
      outcome.results.append(result)
    }
    return outcome
  }

  /// `fields` of an object of `className` (`objectId` nil: a new one) as the server's checks
  /// leave them (`stepChecks`), when there are any.
  private func checked(_ className: String, _ fields: [String: JSONValue], _ objectId: String?)
    throws -> [String: JSONValue]
  {
    try stepChecks?.object(className, fields, objectId) ?? fields
  }

  /// A taken-down object (its `ModerationRule`'s mark set) is gone for its author too.
  private func checkNotTakenDown(_ object: DataObject) throws {
    if let rule = store.rules.moderationRule(of: object.className), object[rule.markField] != nil {
      throw DatastoreError(.notFound)
    }
  }
}

extension DatastoreEngine {
  func perform(_ operation: WriteOperation, for client: DatastoreClient) throws -> WriteOutcome {
    try runWhole(operation, for: client)
  }

  /// `perform` of an engine that runs the steps itself: one transaction of its own.
  func runWhole(_ operation: WriteOperation, for client: DatastoreClient) throws -> WriteOutcome {
    var failed = 0
    do {
      return try transaction { try client.run(operation, failed: &failed) }
    } catch {
      throw WriteOperationError(step: failed, error: error)
    }
  }
}

/// What a server checks in each write of an operation a client across the network sent
/// (`DatastoreClient.perform(_:checking:)`), beyond the engine's rules: the application's
/// limits, which the client's own checks are only a courtesy for. Each answers what to write,
/// or throws the refusal.
@_spi(Server)
public struct StepChecks {
  /// The fields an object of `className` is created (`objectId` nil) or updated with.
  public var object:
    (_ className: String, _ fields: [String: JSONValue], _ objectId: String?) throws -> [String:
      JSONValue]
  /// A file's bytes and type.
  public var file:
    (_ name: String, _ bytes: [UInt8], _ mimeType: String) throws -> (
      bytes: [UInt8], mimeType: String
    )

  public init(
    object: @escaping (String, [String: JSONValue], String?) throws -> [String: JSONValue],
    file: @escaping (String, [UInt8], String) throws -> (bytes: [UInt8], mimeType: String)
  ) {
    self.object = object
    self.file = file
  }
}
