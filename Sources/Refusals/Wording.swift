/// One sentence in both languages the board speaks. Every reason in this module says itself as a
/// `Wording` in one `switch` over its cases, English beside Japanese: a new case without its
/// words, or words without their Japanese, does not compile.
public struct Wording: Sendable, Equatable {
  public let english: String
  public let japanese: String

  public init(_ english: String, _ japanese: String) {
    self.english = english
    self.japanese = japanese
  }

  public func text(japanese: Bool) -> String { japanese ? self.japanese : english }
}

/// Who reads a reason. A person reads fields by their names ("The title", タイトル); a program
/// (an app through `forum serve`, `DatastoreError.detail`) reads them as it sent them ("title").
public enum Reader: Sendable {
  case person, program
}

/// The names of the fields a person may meet in a sentence, English beside Japanese. A field
/// not listed (an app's own) is said as it was sent.
public enum FieldName {
  /// What a person calls `field`: "The title" (at the head of a sentence), タイトル.
  public static func of(_ field: String) -> Wording {
    switch field {
    case "title": return Wording("The title", "タイトル")
    case "description": return Wording("The description", "本文")
    case "text": return Wording("The comment", "コメント")
    case "displayName": return Wording("The name", "表示名")
    case "image": return Wording("The image", "画像")
    case "input": return Wording("The answer", "入力")
    case "line": return Wording("The line", "入力行")
    case "thread": return Wording("The thread number", "スレッド番号")
    case "comment": return Wording("The comment number", "コメント番号")
    case "page": return Wording("The page", "ページ")
    case "profile": return Wording(field, "プロファイル")
    case "query": return Wording(field, "検索語")
    case "argument": return Wording(field, "引数")
    case "partner": return Wording(field, "相手")
    case "fileName": return Wording(field, "ファイル名")
    default: return Wording(field, field)
    }
  }

  /// The field at the head of a sentence for `reader`: a program reads it as sent.
  static func head(_ field: String, for reader: Reader) -> Wording {
    let name = of(field)
    return reader == .person ? name : Wording(field, name.japanese)
  }

  /// The field inside a sentence: as sent in English, by its name in Japanese.
  static func inside(_ field: String) -> Wording { Wording(field, of(field).japanese) }
}
