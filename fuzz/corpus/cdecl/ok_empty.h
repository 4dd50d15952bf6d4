// expect: ok
;;;
/* only comments */
# 1 "<stdin>"
#
