import Foundation
import HTTPTestSupport
import Testing

/// Issue 28 H5: app users' own user objects are small (the board's cap), and those stored big
/// before the cap (planted here in the database) cost another member's `list` and `who`
/// nothing: the terminal reads only the user fields it shows.
@Suite("Big user objects cost others nothing")
struct BigUserObjectTests {
  /// Runs the built forum as `profile` under python's `getrusage`: its exit, output and peak
  /// resident memory in MB.
  private func measured(_ forum: ForumFixture, _ profile: String, _ arguments: [String]) throws
    -> (status: Int, stdout: String, peakMB: Int)
  {
    let environment = forum.environment().map { "\($0.key)=\($0.value)" }
    let run = try Clients.python(
      """
      import json, resource, subprocess, sys
      done = subprocess.run(sys.argv[1:], capture_output=True, stdin=subprocess.DEVNULL)
      print(json.dumps({'status': done.returncode, 'stdout': done.stdout.decode(),
                        'stderr': done.stderr.decode(),
                        'peak': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
      """,
      ["/usr/bin/env", "-i"] + environment + [
        forum.binary, "--db", forum.db, "--profile", profile,
      ] + arguments)
    let seen =
      (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    #expect(seen["stderr"] as? String == "", "\(seen["stderr"] ?? run.summary)")
    return (
      seen["status"] as? Int ?? -1, seen["stdout"] as? String ?? "",
      (seen["peak"] as? Int ?? 0) / 1024
    )
  }

  @Test func twentyBigUsersCostCarolsListAndWhoNothing() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    try forum.ok(["name", "Carol"], profile: "carol")
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
    let keys = try forum.ok(["keys", "--json"], profile: nil).stdout
    let run = try Clients.python(
      SignedClient.prelude + """
        refused = None
        for i in range(20):
            me, token = signup()
            status, body, _ = call('PUT', 'users/' + me, {'displayName': 'App %d' % i}, token)
            assert status == 200, (status, body)
            status, body, _ = call('POST', 'classes/Thread', {'title': 'thread %d' % i}, token)
            assert status == 201, (status, body)
            if refused is None:
                status, body, _ = call('PUT', 'users/' + me, {'junk': [[0]] * 3000}, token)
                refused = [status, (body or {}).get('code'), (body or {}).get('error')]
        print(json.dumps(refused))
        """, [String(server.port), keys])
    #expect(run.status == 0, "\(run.summary)")
    #expect(server.stop() == 0)
    let refused = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [Any]
    #expect(refused?.first as? Int == 400, "\(run.stdout)")
    #expect(refused?.dropFirst().first as? String == "E400002", "\(run.stdout)")
    #expect((refused?.last as? String)?.hasPrefix("junk") == true, "\(run.stdout)")

    let quiet = try measured(forum, "carol", ["list"])
    #expect(quiet.status == 0)
    // 1 MiB of `[0],` on every app user's object, as a board from before the cap holds them.
    let planted = try Clients.python(
      """
      import sqlite3, sys
      db = sqlite3.connect(sys.argv[1], timeout=30)
      db.execute("UPDATE objects SET data = json_set(data, '$.junk', json(?)) "
                 "WHERE class = 'user' AND json_extract(data, '$.displayName') LIKE 'App %'",
                 ('[' + ','.join(['[0]'] * 262144) + ']',))
      db.commit()
      print(db.execute("SELECT count(*) FROM objects WHERE length(data) > 1000000").fetchone()[0])
      """, [forum.db], timeout: 900)
    #expect(
      planted.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "20", "\(planted.summary)")

    let list = try measured(forum, "carol", ["list"])
    #expect(list.status == 0)
    #expect(list.stdout.contains("thread 19") && list.stdout.contains("App 19"), "\(list.stdout)")
    #expect(list.peakMB < 100, "list: \(quiet.peakMB) MB quiet, \(list.peakMB) MB with bombs")
    let who = try measured(forum, "carol", ["who"])
    #expect(who.status == 0)
    #expect(who.stdout.contains("App 7") && who.stdout.contains("Carol"), "\(who.stdout)")
    #expect(who.peakMB < 100, "who: \(who.peakMB) MB with bombs")
  }
}
