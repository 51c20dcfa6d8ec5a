import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Users and roles of an export.
extension NCMBExportReader {

  mutating func readRoles(_ plan: inout ImportPlan) {
    var items: [(item: ImportItem, label: String?)] = []
    var seen = SeenIds()
    var usersOf: [String: Set<String>] = [:]
    var childRoles: [String: [String]] = [:]
    var nameOf: [String: String] = [:]
    let whole = forEach("role.json") { reader, fields, index in
      guard
        let object = reader.object(
          fields, className: "role", file: "role.json", index: index, seen: &seen)
      else { return }
      let at = "role.json \(object.objectId)"
      guard let roleName = fields["roleName"]?.stringValue, !roleName.isEmpty,
        roleName.utf8.count <= 64,
        roleName.utf8.allSatisfy({
          (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            || $0 == 0x5F || $0 == 0x2D
        })
      else {
        reader.problem(reader.messages.importBadField(at, "roleName", "letters, digits, _ or -"))
        return
      }
      guard roleName != "moderator" else {
        reader.problem(reader.messages.importModeratorRole(at))
        return
      }
      nameOf[object.objectId] = roleName
      usersOf[roleName] = Set(NCMBExportReader.related(fields["belongUser"]))
      childRoles[roleName] = NCMBExportReader.related(fields["belongRole"])
      let item = ImportItem.object(object, anonymousId: nil)
      guard reader.checked(item, "role \(object.objectId)") else { return }
      items.append((item, object.objectId))
    }
    // A role's users include those of the roles that belong to it, at any depth.
    for role in usersOf.keys.sorted() {
      var members = Set<String>()
      var visited = Set<String>()
      var queue = [role]
      while let next = queue.popLast() {
        guard visited.insert(next).inserted else { continue }
        members.formUnion(usersOf[next] ?? [])
        queue += (childRoles[next] ?? []).compactMap { nameOf[$0] }
      }
      for userId in members.sorted() {
        let item = ImportItem.roleMember(role: role, userId: userId)
        if checked(item, "role \(role)") { items.append((item, nil)) }
      }
    }
    if whole { plan.batches.append(.roles(items)) }
  }

  /// The objectIds a relation's `objects` point at (none when the export kept only its class).
  static func related(_ value: JSONValue?) -> [String] {
    guard case .array(let objects)? = value?.objectValue?["objects"] else { return [] }
    return objects.compactMap { $0.pointerId }
  }

  /// A user of `user.json` as an item (its anonymous id kept, its secrets not); nil after a
  /// problem.
  mutating func userItem(_ fields: [String: JSONValue], index: Int, seen: inout SeenIds)
    -> ImportItem?
  {
    guard
      var object = object(
        fields, className: User.className, file: "user.json", index: index, seen: &seen)
    else { return nil }
    let anonymous = fields["authData"]?.objectValue?["anonymous"]?.objectValue?["id"]
    var data = object.fields
    for secret in ["authData", "password", "sessionToken"] { data[secret] = nil }
    let at = "user.json \(object.objectId)"
    // How people address the user (`@name`): NCMB's, kept as it was (spaces and all), but not
    // none.
    guard let userName = data["userName"]?.stringValue, !userName.isEmpty else {
      problem(messages.importMissingField(at, "userName"))
      return nil
    }
    object = object.with(fields: data)
    guard let anonymous else {
      if !writing { needPassword.append((userName, object.objectId)) }
      return .object(object, anonymousId: nil)
    }
    guard let id = anonymous.stringValue else {
      problem(messages.importBadField(at, "authData.anonymous.id", "not a string"))
      return nil
    }
    return .object(object, anonymousId: id)
  }
}
