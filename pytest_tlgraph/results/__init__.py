"""The results folder: the files a failure leaves (:mod:`.artifacts`), and the runs that
share one folder without deleting each other's files (:mod:`.runs`, :mod:`.runlock`)."""
