/// The rules' one encoding, a JSON value, and its reading. Each rule's members are written once,
/// by name, here or beside the rule (`FlagRule`): boards made before keep opening as long as this text stays what they recorded
/// (`RulesEncodingTests`). Lists that older rules lacked (pairs, revisions, moderation, flags) are left
/// out when empty, so older boards' records stay theirs; a member without a value (a nil
/// `fileField`) is left out; a set is written sorted.
extension EngineRules {
  public var record: JSONValue {
    var members: [String: JSONValue] = [
      "sequences": .array(sequences.map(\.record)), "owners": .array(owners.map(\.record)),
      "children": .array(children.map(\.record)),
    ]
    if !pairs.isEmpty { members["pairs"] = .array(pairs.map(\.record)) }
    if !revisions.isEmpty { members["revisions"] = .array(revisions.map(\.record)) }
    if !moderation.isEmpty { members["moderation"] = .array(moderation.map(\.record)) }
    if !flags.isEmpty { members["flags"] = .array(flags.map(\.record)) }
    if !stewards.isEmpty { members["stewards"] = .array(stewards.map(\.record)) }
    return .object(members)
  }

  public init(record: JSONValue) throws {
    let reader = RecordReader(record)
    self.init(
      sequences: try reader.list("sequences").map(SequenceRule.init(record:)),
      owners: try reader.list("owners").map(OwnerRule.init(record:)),
      children: try reader.list("children").map(ChildRule.init(record:)),
      pairs: try reader.list("pairs").map(PairRule.init(record:)),
      revisions: try reader.list("revisions").map(RevisionRule.init(record:)),
      moderation: try reader.list("moderation").map(ModerationRule.init(record:)),
      flags: try reader.list("flags").map(FlagRule.init(record:)),
      stewards: try reader.list("stewards").map(StewardRule.init(record:)))
    try validate()
  }
}

/// Reads the members of one recorded rule; a missing name is a damaged record.
struct RecordReader {
  let members: [String: JSONValue]

  init(_ value: JSONValue) { members = value.objectValue ?? [:] }

  func text(_ key: String) throws -> String {
    guard let value = members[key]?.stringValue else {
      throw DatastoreError(.systemError, detail: "the recorded rules lack \(key)")
    }
    return value
  }

  func optionalText(_ key: String) -> String? { members[key]?.stringValue }

  func texts(_ key: String) -> [String] {
    if case .array(let items)? = members[key] { return items.compactMap(\.stringValue) }
    return []
  }

  func list(_ key: String) -> [JSONValue] {
    if case .array(let items)? = members[key] { return items }
    return []
  }
}

private func texts(_ values: [String]) -> JSONValue { .array(values.map { .string($0) }) }

func recordObject(_ members: [String: JSONValue?]) -> JSONValue {
  .object(members.compactMapValues { $0 })
}

extension SequenceRule {
  var record: JSONValue {
    recordObject([
      "className": .string(className), "field": .string(field), "sequence": .string(sequence),
    ])
  }

  init(record: JSONValue) throws {
    let r = RecordReader(record)
    self.init(
      className: try r.text("className"), field: try r.text("field"),
      sequence: try r.text("sequence"))
  }
}

extension OwnerRule {
  var record: JSONValue {
    recordObject([
      "className": .string(className), "field": .string(field),
      "additionalWriters": texts(additionalWriters.sorted()),
    ])
  }

  init(record: JSONValue) throws {
    let r = RecordReader(record)
    self.init(
      className: try r.text("className"), field: try r.text("field"),
      additionalWriters: Set(r.texts("additionalWriters")))
  }
}

extension ChildRule {
  var record: JSONValue {
    recordObject([
      "childClass": .string(childClass), "parentField": .string(parentField),
      "parentClass": .string(parentClass), "numberField": .string(numberField),
      "lastNumberField": .string(lastNumberField), "countField": .string(countField),
      "activityField": .string(activityField), "fileField": fileField.map { .string($0) },
    ])
  }

  init(record: JSONValue) throws {
    let r = RecordReader(record)
    self.init(
      childClass: try r.text("childClass"), parentField: try r.text("parentField"),
      parentClass: try r.text("parentClass"), numberField: try r.text("numberField"),
      lastNumberField: try r.text("lastNumberField"), countField: try r.text("countField"),
      activityField: try r.text("activityField"), fileField: r.optionalText("fileField"))
  }
}

extension PairRule {
  var record: JSONValue {
    recordObject([
      "className": .string(className), "ownerField": .string(ownerField),
      "partnerField": .string(partnerField), "pairField": .string(pairField),
    ])
  }

  init(record: JSONValue) throws {
    let r = RecordReader(record)
    self.init(
      className: try r.text("className"), ownerField: try r.text("ownerField"),
      partnerField: try r.text("partnerField"), pairField: try r.text("pairField"))
  }
}

extension RevisionRule {
  var record: JSONValue {
    recordObject([
      "className": .string(className), "fields": texts(fields),
      "editDateField": .string(editDateField),
    ])
  }

  init(record: JSONValue) throws {
    let r = RecordReader(record)
    self.init(
      className: try r.text("className"), fields: r.texts("fields"),
      editDateField: try r.text("editDateField"))
  }
}

extension ModerationRule {
  var record: JSONValue {
    recordObject([
      "className": .string(className), "role": .string(role),
      "contentFields": texts(contentFields), "fileField": fileField.map { .string($0) },
      "markField": .string(markField),
    ])
  }

  init(record: JSONValue) throws {
    let r = RecordReader(record)
    self.init(
      className: try r.text("className"), role: try r.text("role"),
      contentFields: r.texts("contentFields"), fileField: r.optionalText("fileField"),
      markField: try r.text("markField"))
  }
}

extension StewardRule {
  var record: JSONValue {
    recordObject([
      "role": .string(role), "bannedRole": .string(bannedRole), "settings": texts(settings),
    ])
  }

  init(record: JSONValue) throws {
    let r = RecordReader(record)
    self.init(
      role: try r.text("role"), bannedRole: try r.text("bannedRole"), settings: r.texts("settings"))
  }
}
