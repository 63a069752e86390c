"""Reading replies: parsing (reply -> Parsed) and grading (one path from a reply to a Result)."""
