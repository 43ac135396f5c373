"""Small helpers the rest of app/ shares."""
