import Datastore

/// `users[/ID]`, `login`, `logout`: anonymous and password sign-up (`authData.anonymous.id`, or
/// `userName` and `password`), login by name and password (GET with query parameters as NCMB's
/// documentation, POST with a JSON body as the Swift SDK), the users an app may read, a user's
/// own fields and password, and the end of a session. Mail-address accounts need a mail server
/// the board does not have.
struct UsersController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    switch call.route.resource {
    case .login:
      guard call.method == "GET" || call.method == "POST" else { throw NCMBError.method }
      return try login(call)
    case .logout:
      guard call.method == "GET" || call.method == "POST" else { throw NCMBError.method }
      guard let userId = call.client.userId else { throw NCMBError.noSession }
      try call.store.endSessions(userId: userId)
      return NCMBService.json(.object([:]))
    default:
      return try users(call, call.route.names.first)
    }
  }

  /// A password login: refused alike (E401002, the same work) for an unknown name and a wrong
  /// password; a name that had `--logins` wrong passwords in the last minute waits (E429001),
  /// whether it exists or not.
  private func login(_ call: NCMBCall) throws -> HTTPResponse {
    var fields: [String: String] = [:]
    if call.method == "GET" {
      fields = try NCMBQuery.parameters(call.request.rawQuery)
    } else {
      for (name, value) in try NCMBJSON.object(call.request.body) {
        guard let text = value.stringValue else { throw NCMBError.invalid(name) }
        fields[name] = text
      }
    }
    guard let name = fields["userName"], !name.isEmpty else {
      if fields["mailAddress"] != nil { throw NCMBError.needsMail("login by mail address") }
      throw NCMBError.empty("userName")
    }
    guard let password = fields["password"], !password.isEmpty else {
      throw NCMBError.empty("password")
    }
    if let refusal = call.rates?.wrongPasswordRefusal(name) { throw refusal }
    let login: Login
    do {
      login = try call.store.login(userName: name, password: password)
    } catch let error as DatastoreError where error.reason == .account(.wrongPassword) {
      call.rates?.noteWrongPassword(name)
      // forum's remote engine reads the reason, in its reader's language.
      throw call.answersInWire ? error : NCMBError.idPass
    }
    guard case .object(var user) = NCMBJSON.object(login.user.object, call.policy) else {
      throw NCMBError.system
    }
    user["sessionToken"] = .string(login.sessionToken)
    return NCMBService.json(.object(user))
  }

  /// `POST users` with `userName` and `password`: a new user and its session (201).
  private func signUp(_ call: NCMBCall, _ fields: [String: JSONValue]) throws -> HTTPResponse {
    guard let name = fields["userName"] else { throw NCMBError.empty("userName") }
    guard let password = fields["password"] else { throw NCMBError.empty("password") }
    guard let nameText = name.stringValue else { throw NCMBError.invalid("userName") }
    guard let passwordText = password.stringValue else { throw NCMBError.invalid("password") }
    for field in fields.keys where !["userName", "password", "acl"].contains(field) {
      throw NCMBError.invalid(field, "set it once signed up (PUT users/ID)")
    }
    let login: Login
    do {
      login = try call.store.signUp(userName: nameText, password: passwordText)
    } catch let error as DatastoreError where error.reason == .store(.alreadyExists) {
      throw call.answersInWire ? error : NCMBError.duplicate("userName")
    }
    return NCMBService.json(
      .object([
        "objectId": .string(login.user.objectId),
        "createDate": NCMBJSON.date(login.user.object.createDate),
        "userName": .string(login.user.userName), "sessionToken": .string(login.sessionToken),
      ]), status: 201)
  }

  private func users(_ call: NCMBCall, _ objectId: String?) throws -> HTTPResponse {
    if call.answersInWire, let objectId, call.method == "PUT" || call.method == "DELETE" {
      return try ObjectsController.engineWrite(call, User.className, objectId)
    }
    let client = call.client
    switch (call.method, objectId) {
    case ("POST", nil):
      let fields = try NCMBJSON.object(call.request.body)
      if fields["mailAddress"] != nil {
        throw NCMBError.invalid(
          "mailAddress", NCMBError.mailServer("sign-up by mail address"))
      }
      if fields["userName"] != nil || fields["password"] != nil {
        return try signUp(call, fields)
      }
      guard
        let id = fields["authData"]?.objectValue?["anonymous"]?.objectValue?["id"]?.stringValue
      else {
        throw NCMBError.invalid(
          "authData", "sign up with authData.anonymous.id, or with userName and password")
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
        ObjectsController.shape(try client.get(User.className, objectId: id), call))
    case ("PUT", let id?):
      guard let me = client.userId else { throw NCMBError.noSession }
      guard id == me else { throw NCMBError.noAccess.because("only a user changes itself") }
      var fields = try NCMBJSON.object(call.request.body)
      for field in ObjectsController.systemFields { fields[field] = nil }
      let password = fields.removeValue(forKey: "password")
      for field in ["authData", "mailAddress", "sessionToken", "userName", "acl"]
      where fields[field] != nil {
        throw NCMBError.invalid(field, "cannot be changed here")
      }
      fields = try call.policy.checkedObject(User.className, fields, me, client)
      if let password {
        guard let text = password.stringValue else { throw NCMBError.invalid("password") }
        do {
          try client.setPassword(
            text, keepingSession: call.request.header(lowercased: "x-ncmb-apps-session-token"))
        } catch let error as DatastoreError where error.reason == .store(.alreadyExists) {
          throw NCMBError.duplicate("userName")
        }
      }
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
