"""Files in and out: JSON Lines and image readers hardened against hostile input; set export."""
