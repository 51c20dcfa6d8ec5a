import Datastore

/// `users[/ID]`, `login`, `logout`: anonymous sign-up, the users an app may read, a user's own
/// fields, and the end of a session. The board has no password accounts.
struct UsersController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    switch call.route.resource {
    case .login:
      guard call.method == "GET" || call.method == "POST" else { throw NCMBError.method }
      // The board has no password accounts: every user is anonymous.
      throw NCMBError.idPass
    case .logout:
      guard call.method == "GET" || call.method == "POST" else { throw NCMBError.method }
      guard let userId = call.client.userId else { throw NCMBError.noSession }
      try call.store.endSessions(userId: userId)
      return NCMBService.json(.object([:]))
    default:
      return try users(call, call.route.names.first)
    }
  }

  private func users(_ call: NCMBCall, _ objectId: String?) throws -> HTTPResponse {
    let client = call.client
    switch (call.method, objectId) {
    case ("POST", nil):
      let fields = try NCMBJSON.object(call.request.body)
      guard
        let id = fields["authData"]?.objectValue?["anonymous"]?.objectValue?["id"]?.stringValue
      else {
        // Every user of the board is anonymous (no passwords, no mail).
        throw NCMBError.invalid("authData", "only anonymous sign-up is supported")
      }
      let login: Login
      do {
        login = try call.store.loginAnonymously(secret: id)
      } catch let error as DatastoreError where error.code == .invalid {
        throw NCMBError.invalid("authData")
      }
      return NCMBService.json(
        .object([
          "objectId": .string(login.user.objectId),
          "createDate": NCMBJSON.date(login.user.object.createDate),
          "userName": .string(login.user.userName), "sessionToken": .string(login.sessionToken),
          "authData": .object(["anonymous": .object(["id": .string(id)])]),
        ]), status: 201)
    case ("GET", nil):
      return try ObjectsController.search(call, User.className)
    case ("GET", let id?):
      return NCMBService.json(
        NCMBJSON.object(try client.get(User.className, objectId: id), call.policy))
    case ("PUT", let id?):
      guard let me = client.userId else { throw NCMBError.noSession }
      guard id == me else { throw NCMBError.noAccess.because("only a user changes itself") }
      var fields = try NCMBJSON.object(call.request.body)
      for field in ObjectsController.systemFields { fields[field] = nil }
      for field in ["authData", "password", "mailAddress", "sessionToken", "userName", "acl"]
      where fields[field] != nil {
        throw NCMBError.invalid(field, "cannot be changed here")
      }
      fields = try call.policy.object(User.className, fields, me, client)
      var updated = try client.currentUser().object
      if let name = fields.removeValue(forKey: "displayName") {
        guard let text = name.stringValue else { throw NCMBError.invalid("displayName") }
        updated = try client.setDisplayName(text).object
      }
      if !fields.isEmpty {
        updated = try client.update(
          User.className, objectId: me, set: try fields.mapValues(NCMBJSON.stored))
      }
      return NCMBService.json(.object(["updateDate": NCMBJSON.date(updated.updateDate)]))
    case ("DELETE", let id?):
      guard let me = client.userId else { throw NCMBError.noSession }
      guard id == me else { throw NCMBError.noAccess.because("only a user deletes itself") }
      try client.delete(User.className, objectId: me)
      try call.store.endSessions(userId: me)
      return NCMBService.deleted
    default:
      throw NCMBError.method
    }
  }
}

/// `roles[/ID]`: the roles the caller holds (`roleName`); a role by id is not served.
struct RolesController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    guard call.route.names.isEmpty else { throw NCMBError.notFound }
    guard call.method == "GET" else { throw NCMBError.method }
    let roles = call.client.principals.names.filter { $0.hasPrefix("role:") }.sorted()
    return NCMBService.json(
      .object([
        "results": .array(roles.map { .object(["roleName": .string(String($0.dropFirst(5)))]) })
      ]))
  }
}
