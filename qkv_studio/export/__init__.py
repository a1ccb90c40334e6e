"""Exporting figures and numbers to files: the format registry (:mod:`.formats`), the writers
(:mod:`.figures`, :mod:`.png`, :mod:`.numbers`), one file (:mod:`.files`), a deck of all stages
(:mod:`.deck`) and the atomic writing they share (:mod:`.atomic`)."""
