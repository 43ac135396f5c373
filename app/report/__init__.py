"""The customer report: content gathered from the store (Qt-free) and the PDF laid out with QPainter."""
