"""A client call releases the GIL while it waits: another Python thread runs meanwhile."""

import threading
import time


def test_another_thread_pays_while_aguardar_recarga_waits(carapi_servidor):
    client = carapi_servidor.client(saldo="0")
    criada = client.criar_recarga(500)
    dentro = threading.Event()
    pago = []

    def pagador():
        dentro.wait()
        time.sleep(1)  # after the waiter's first (immediate) read
        carapi_servidor.pagar(criada["recargaId"])
        pago.append(True)

    t = threading.Thread(target=pagador)
    t.start()
    dentro.set()
    # With the GIL held through the wait the payer could not run and this would end in
    # TempoEsgotado; it returns at the 5 s read with the payment made meanwhile.
    fim = client.aguardar_recarga(criada["recargaId"], timeout=30)
    t.join()
    assert pago == [True]
    assert fim["status"] == "Confirmado"
