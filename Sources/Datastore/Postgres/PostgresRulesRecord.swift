/// The rules `forum init` installed, recorded in `forum.meta` as JSON so that every connection
/// enforces (and reports) the same rules, whoever opens the board.
extension EngineRules {
  var recordJSON: JSONValue {
    .object([
      "sequences": .array(
        sequences.map {
          .object([
            "className": .string($0.className), "field": .string($0.field),
            "sequence": .string($0.sequence),
          ])
        }),
      "owners": .array(
        owners.map {
          .object([
            "className": .string($0.className), "field": .string($0.field),
            "additionalWriters": .array($0.additionalWriters.sorted().map { .string($0) }),
          ])
        }),
      "children": .array(
        children.map {
          var fields: [String: JSONValue] = [
            "childClass": .string($0.childClass), "parentField": .string($0.parentField),
            "parentClass": .string($0.parentClass), "numberField": .string($0.numberField),
            "lastNumberField": .string($0.lastNumberField), "countField": .string($0.countField),
            "activityField": .string($0.activityField),
          ]
          if let file = $0.fileField { fields["fileField"] = .string(file) }
          return .object(fields)
        }),
      "pairs": .array(
        pairs.map {
          .object([
            "className": .string($0.className), "ownerField": .string($0.ownerField),
            "partnerField": .string($0.partnerField), "pairField": .string($0.pairField),
          ])
        }),
      "revisions": .array(
        revisions.map {
          .object([
            "className": .string($0.className), "fields": .array($0.fields.map { .string($0) }),
            "editDateField": .string($0.editDateField),
          ])
        }),
      "moderation": .array(
        moderation.map {
          var fields: [String: JSONValue] = [
            "className": .string($0.className), "role": .string($0.role),
            "contentFields": .array($0.contentFields.map { .string($0) }),
            "markField": .string($0.markField),
          ]
          if let file = $0.fileField { fields["fileField"] = .string(file) }
          return .object(fields)
        }),
    ])
  }

  init(record: JSONValue) throws {
    func text(_ object: JSONValue, _ key: String) throws -> String {
      guard let value = object.objectValue?[key]?.stringValue else {
        throw DatastoreError(.systemError, detail: "the recorded rules lack \(key)")
      }
      return value
    }
    func list(_ key: String) -> [JSONValue] {
      if case .array(let items)? = record.objectValue?[key] { return items }
      return []
    }
    func names(_ object: JSONValue, _ key: String) -> [String] {
      if case .array(let items)? = object.objectValue?[key] {
        return items.compactMap(\.stringValue)
      }
      return []
    }
    self.init(
      sequences: try list("sequences").map {
        SequenceRule(
          className: try text($0, "className"), field: try text($0, "field"),
          sequence: try text($0, "sequence"))
      },
      owners: try list("owners").map { owner in
        var writers: Set<String> = []
        if case .array(let items)? = owner.objectValue?["additionalWriters"] {
          writers = Set(items.compactMap(\.stringValue))
        }
        return OwnerRule(
          className: try text(owner, "className"), field: try text(owner, "field"),
          additionalWriters: writers)
      },
      children: try list("children").map {
        ChildRule(
          childClass: try text($0, "childClass"), parentField: try text($0, "parentField"),
          parentClass: try text($0, "parentClass"), numberField: try text($0, "numberField"),
          lastNumberField: try text($0, "lastNumberField"), countField: try text($0, "countField"),
          activityField: try text($0, "activityField"),
          fileField: $0.objectValue?["fileField"]?.stringValue)
      },
      pairs: try list("pairs").map {
        PairRule(
          className: try text($0, "className"), ownerField: try text($0, "ownerField"),
          partnerField: try text($0, "partnerField"), pairField: try text($0, "pairField"))
      },
      revisions: try list("revisions").map {
        RevisionRule(
          className: try text($0, "className"), fields: names($0, "fields"),
          editDateField: try text($0, "editDateField"))
      },
      moderation: try list("moderation").map {
        ModerationRule(
          className: try text($0, "className"), role: try text($0, "role"),
          contentFields: names($0, "contentFields"),
          fileField: $0.objectValue?["fileField"]?.stringValue,
          markField: try text($0, "markField"))
      })
    try validate()
  }
}
