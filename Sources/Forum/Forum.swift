// The board: threads, comments, attachments. Never prints.
