import Foundation
import Testing

/// `forum import ncmb` onto a board people already use: what the export names that is someone
/// else's on the board stays theirs. A thread refused because its id is taken takes its
/// comments with it (they went into the other thread); a thread whose picture is refused
/// because another file has its name is refused too (it showed that file, and deleting the
/// thread deleted it); a comment fewer may read than its thread is one line, not widened; and a
/// file entry without dates is unchanged on a second run.
@Suite("forum import ncmb: what is taken on the board stays its owner's")
struct ImportTakenTests {
  /// Carol's thread with a picture, posted before the import; its id and picture's name.
  private func carolsThread(_ forum: ForumFixture) throws -> (id: String, picture: String) {
    try forum.ok(["init"], profile: nil)
    let posted = try forum.run(
      ["--json", "new", "--title", "carol's", "--image", ImportTests.export + "/files/photo.png"],
      profile: "carol")
    #expect(posted.status == 0, "\(posted.summary)")
    let thread = try posted.json()
    return (thread.string("objectId") ?? "", thread.string("fileName") ?? "")
  }

  private func carolsComments(_ forum: ForumFixture) throws -> [String] {
    let show = try forum.run(["--json", "show", "1"], profile: "carol")
    #expect(show.status == 0, "\(show.summary)")
    return try show.json().objects("results").map { $0.string("text") ?? "" }
  }

  @Test func aCommentOfARefusedThreadGoesNowhere() throws {
    let forum = try ForumFixture()
    let carol = try carolsThread(forum)
    let dir = forum.root + "/export"
    try ImportBoardTests.writeExport(to: dir)
    // The export's thread two has carol's thread's id; a comment of it says "injected".
    let threads = try String(contentsOfFile: dir + "/Thread.json", encoding: .utf8)
    try Data(threads.replacing("SeedThreadTwo002", with: carol.id).utf8).write(
      to: URL(fileURLWithPath: dir + "/Thread.json"))
    let comments = try String(contentsOfFile: dir + "/Comment.json", encoding: .utf8)
    try Data(
      comments.replacing("SeedThreadTwo002", with: carol.id).replacing("カレー", with: "injected")
        .utf8
    ).write(to: URL(fileURLWithPath: dir + "/Comment.json"))
    let run = try forum.run(["import", "ncmb", dir], profile: nil)
    #expect(run.status == 0, "\(run.summary)")
    #expect(
      run.stdoutLines.contains(
        "Thread: imported 1, unchanged 0, refused 1 (already on the board with other values: "
          + carol.id + ")"), "\(run.stdout)")
    #expect(
      run.stdoutLines.contains(
        "Comment: imported 3, unchanged 0, refused 1 (their thread or picture was refused: "
          + "SeedCommentA0002)"), "\(run.stdout)")
    #expect(try carolsComments(forum) == [], "carol's thread has no comment of the export")
    let second = try forum.run(["import", "ncmb", dir], profile: nil)
    #expect(second.stdoutLines.contains { $0.hasPrefix("Comment: imported 0, unchanged 3") })
  }

  @Test func aThreadWhosePictureIsAnothersIsRefused() throws {
    let forum = try ForumFixture()
    let carol = try carolsThread(forum)
    let dir = forum.root + "/export"
    try ImportBoardTests.writeExport(to: dir)
    // The export's picture has the name of carol's, with other bytes.
    let picture = ImportBoardTests.picture
    try FileManager.default.moveItem(
      atPath: dir + "/files/" + picture, toPath: dir + "/files/" + carol.picture)
    for file in ["files.json", "Thread.json"] {
      let text = try String(contentsOfFile: dir + "/" + file, encoding: .utf8)
      try Data(text.replacing(picture, with: carol.picture).utf8).write(
        to: URL(fileURLWithPath: dir + "/" + file))
    }
    let run = try forum.run(["import", "ncmb", dir], profile: nil)
    #expect(run.status == 0, "\(run.summary)")
    #expect(
      run.stdoutLines.contains(
        "files: imported 0, unchanged 0, refused 1 (already on the board with other values: "
          + carol.picture + ")"), "\(run.stdout)")
    #expect(
      run.stdoutLines.contains(
        "Thread: imported 1, unchanged 0, refused 1 (their thread or picture was refused: "
          + "SeedThreadOne001)"), "\(run.stdout)")
    // Its comments went with it; thread two's stayed.
    #expect(
      run.stdoutLines.contains(
        "Comment: imported 1, unchanged 0, refused 3 (their thread or picture was refused: "
          + "SeedCommentB0003, SeedCommentA0001, SeedCommentA0004)"), "\(run.stdout)")
    let image = try forum.run(["image", "1"], profile: "carol")
    #expect(image.status == 0, "carol's picture is hers: \(image.summary)")
  }

  @Test func aCommentFewerMayReadThanItsThreadIsOneLine() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let before = try forum.importFingerprint()
    let dir = forum.root + "/export"
    try ImportBoardTests.writeExport(to: dir)
    let comments = try String(contentsOfFile: dir + "/Comment.json", encoding: .utf8)
    let user = ImportBoardTests.userA
    let onlyA = #"{""# + user + #"":{"read":true,"write":true}}"#
    try Data(
      comments.replacing(
        #""SeedCommentA0004","createDate":"2021-08-20T00:00:00.000Z","updateDate":"2021-08-20T00:00:00.000Z","acl":"#
          + ImportBoardTests.acl(user),
        with:
          #""SeedCommentA0004","createDate":"2021-08-20T00:00:00.000Z","updateDate":"2021-08-20T00:00:00.000Z","acl":"#
          + onlyA
      ).utf8
    ).write(to: URL(fileURLWithPath: dir + "/Comment.json"))
    let run = try forum.run(["import", "ncmb", dir], profile: nil)
    #expect(
      run.status == 1 && run.stdout == ""
        && run.stderr
          == "Comment SeedCommentA0004: fewer may read it than its thread (the board shows a "
          + "thread's comments to everyone who reads the thread)\n"
          + "forum: import refused: 1 problem above; nothing was written\n",
      "\(run.summary)")
    #expect(try forum.importFingerprint() == before)
  }

  @Test func aFileWithoutDatesIsUnchangedOnASecondRun() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let dir = forum.root + "/export"
    try FileManager.default.createDirectory(
      atPath: dir + "/files", withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: ImportTests.export + "/files/photo.png", toPath: dir + "/files/nodate.png")
    try Data(#"{"results":[{"fileName":"nodate.png","mimeType":"image/png"}]}"#.utf8).write(
      to: URL(fileURLWithPath: dir + "/files.json"))
    let first = try forum.run(["import", "ncmb", dir], profile: nil)
    #expect(first.stdout == "files: imported 1, unchanged 0, refused 0\n", "\(first.summary)")
    let second = try forum.run(["import", "ncmb", dir], profile: nil)
    #expect(second.stdout == "files: imported 0, unchanged 1, refused 0\n", "\(second.summary)")
    // A copy of the export (new modification times) is the same export.
    let copy = forum.root + "/export-copy"
    try FileManager.default.copyItem(atPath: dir, toPath: copy)
    let third = try forum.run(["import", "ncmb", copy], profile: nil)
    #expect(third.stdout == "files: imported 0, unchanged 1, refused 0\n", "\(third.summary)")
  }
}

extension ImportTakenTests {
  /// A user's name is how people address them (`@name`, `dm`): an exported user named as
  /// someone on the board is (in any case), as another exported user, or with no name or one
  /// sign-up refuses, is one line and nothing is written. Two people answered to one handle
  /// before, and `dm` went to the first.
  @Test func aUserNamedAsSomeoneElseIsOneLine() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let posted = try forum.run(["--json", "new", "--title", "carol's"], profile: "carol")
    let thread = try posted.json()
    let handle = thread.string("userName") ?? ""
    let carol = thread.object("user")?.string("objectId") ?? ""
    #expect(!handle.isEmpty && !carol.isEmpty, "\(posted.stdout)")
    let before = try forum.importFingerprint()
    let userA = ImportBoardTests.userA
    let userB = ImportBoardTests.userB
    let cases: [(from: String, to: String, line: String)] = [
      (
        "u" + userA, handle,
        "user.json \(userA): userName \(handle) is another user's on the board (\(carol))"
      ),
      (
        "u" + userB, "u" + userA,
        "user.json \(userB): userName u\(userA) is also user \(userA)'s in user.json"
      ),
      ("u" + userA, "", "user.json \(userA): no userName"),
    ]
    for (index, bad) in cases.enumerated() {
      let dir = forum.root + "/export\(index)"
      try ImportBoardTests.writeExport(to: dir)
      let users = try String(contentsOfFile: dir + "/user.json", encoding: .utf8)
      try Data(
        users.replacing(
          #""userName":""# + bad.from + #"""#, with: #""userName":""# + bad.to + #"""#
        )
        .utf8
      ).write(to: URL(fileURLWithPath: dir + "/user.json"))
      let run = try forum.run(["import", "ncmb", dir], profile: nil)
      #expect(
        run.status == 1 && run.stdout == ""
          && run.stderr.hasPrefix(bad.line + "\n")
          && run.stderr.hasSuffix("nothing was written\n"), "\(run.summary)")
      #expect(try forum.importFingerprint() == before)
    }
    // NCMB's own names come as they were: spaces, and another's in other case (a loose `@name`
    // is then ambiguous, and `dm @handle` still finds carol).
    let dir = forum.root + "/export-honest"
    try ImportBoardTests.writeExport(to: dir)
    let users = try String(contentsOfFile: dir + "/user.json", encoding: .utf8)
    try Data(
      users.replacing("u" + userA, with: "Yamada Tarou").replacing(
        "u" + userB, with: handle.uppercased()
      ).utf8
    ).write(to: URL(fileURLWithPath: dir + "/user.json"))
    let honest = try forum.run(["import", "ncmb", dir], profile: nil)
    #expect(honest.status == 0 && honest.stdout.hasPrefix("user: imported 2"), "\(honest.summary)")
    let sent = try forum.run(["dm", "@" + handle, "hello carol"], profile: "dave")
    #expect(sent.status == 0, "\(sent.summary)")
    let carols = try forum.run(["--json", "inbox"], profile: "carol")
    #expect(carols.stdout.contains("hello carol"), "\(carols.summary)")
  }

  /// On SQLite the board's owner is its first user: the first made on the board, not the one
  /// with the oldest date. An import brings users with their own dates (2021 here), and the
  /// oldest of them took the board: its owner was refused `mod`.
  @Test func importedUsersDoNotTakeTheBoard() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    try forum.ok(["new", "--title", "carol's"], profile: "carol")
    let dir = forum.root + "/export"
    try ImportBoardTests.writeExport(to: dir)
    #expect(try forum.run(["import", "ncmb", dir], profile: nil).status == 0)
    let set = try forum.run(["mod", "posts-per-minute", "5"], profile: "carol")
    #expect(set.status == 0, "carol still owns the board: \(set.summary)")
  }
}
