// Nothing: forum-bench times how long starting and ending this program takes.
